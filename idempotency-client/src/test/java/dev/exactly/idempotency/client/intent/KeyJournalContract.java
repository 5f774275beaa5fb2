package dev.exactly.idempotency.client.intent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.client.IdempotentRequest;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What every {@link KeyJournal} does; each journal's test extends it. */
abstract class KeyJournalContract {
    static final Instant T0 = Instant.parse("2026-12-04T10:15:00.123Z");

    /** A new, empty journal. */
    abstract KeyJournal journal();

    static IdempotentRequest request(String body) {
        return IdempotentRequest.builder("POST", URI.create("http://127.0.0.1:8080/v1/charges"))
                .alsoTo(URI.create("http://127.0.0.1:8081/v1/charges"))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer sk_secret")
                .header("X-Trace", "a")
                .header("X-Trace", "b: c")
                .body(body.getBytes(StandardCharsets.UTF_8))
                .build();
    }

    static JournalEntry entry(String id, String key, Instant at) {
        return JournalEntry.pending(IntentId.of("checkout", id), key, request("{\"order\":\"" + id + "\"}"), at);
    }

    @Test
    void theFirstEntryOfAnIntentWinsAndIsFoundAgain() {
        KeyJournal journal = journal();
        JournalEntry first = entry("order-1", "key-1", T0);

        assertThat(journal.putIfAbsent(first)).isEqualTo(first);
        assertThat(journal.putIfAbsent(entry("order-1", "key-2", T0.plusSeconds(1))))
                .isEqualTo(first);
        assertThat(journal.find(IntentId.of("checkout", "order-1"))).contains(first);
        assertThat(journal.find(IntentId.of("checkout", "order-2"))).isEmpty();
        assertThat(journal.find(IntentId.of("refunds", "order-1"))).isEmpty();
    }

    @Test
    void theExactRequestIsKeptWithoutCredentials() {
        KeyJournal journal = journal();
        JournalEntry stored = journal.putIfAbsent(entry("order-1", "key-1", T0));

        JournalEntry read = journal.find(stored.intent()).orElseThrow();
        assertThat(read.request().headers())
                .doesNotContainKey("authorization")
                .containsEntry("content-type", List.of("application/json"))
                .containsEntry("x-trace", List.of("a", "b: c"));
        assertThat(read.request().body()).isEqualTo("{\"order\":\"order-1\"}".getBytes(StandardCharsets.UTF_8));
        assertThat(read.request().targets()).hasSize(2);
        assertThat(read.createdAt()).isEqualTo(T0);
        assertThat(read.finished()).isFalse();
    }

    @Test
    void finishingMarksTheEntryAndOnlyForItsKey() {
        KeyJournal journal = journal();
        JournalEntry e = journal.putIfAbsent(entry("order-1", "key-1", T0));

        assertThat(journal.finish(e.intent(), "another-key", 201, T0.plusSeconds(1)))
                .isFalse();
        assertThat(journal.finish(IntentId.of("checkout", "nope"), "key-1", 201, T0.plusSeconds(1)))
                .isFalse();
        assertThat(journal.finish(e.intent(), "key-1", 201, T0.plusSeconds(2))).isTrue();

        JournalEntry read = journal.find(e.intent()).orElseThrow();
        assertThat(read.finished()).isTrue();
        assertThat(read.finalStatus()).isEqualTo(201);
        assertThat(read.finishedAt()).isEqualTo(T0.plusSeconds(2));
        assertThat(read.key()).isEqualTo("key-1");
    }

    @Test
    void pendingListsUnfinishedEntriesOldestFirst() {
        KeyJournal journal = journal();
        journal.putIfAbsent(entry("b", "key-b", T0.plusSeconds(2)));
        journal.putIfAbsent(entry("a", "key-a", T0.plusSeconds(1)));
        journal.putIfAbsent(entry("c", "key-c", T0.plusSeconds(3)));
        journal.finish(IntentId.of("checkout", "c"), "key-c", 402, T0.plusSeconds(4));

        assertThat(journal.pending()).extracting(JournalEntry::key).containsExactly("key-a", "key-b");
    }

    @Test
    void finishedEntriesAreRemovedAfterTheCutoffOnly() {
        KeyJournal journal = journal();
        journal.putIfAbsent(entry("old", "key-old", T0));
        journal.putIfAbsent(entry("recent", "key-recent", T0));
        journal.putIfAbsent(entry("pending", "key-pending", T0));
        journal.finish(IntentId.of("checkout", "old"), "key-old", 201, T0.plusSeconds(10));
        journal.finish(IntentId.of("checkout", "recent"), "key-recent", 201, T0.plusSeconds(100));

        assertThat(journal.removeFinishedBefore(T0.plusSeconds(50))).isEqualTo(1);

        assertThat(journal.find(IntentId.of("checkout", "old"))).isEmpty();
        assertThat(journal.find(IntentId.of("checkout", "recent"))).isPresent();
        assertThat(journal.find(IntentId.of("checkout", "pending"))).isPresent();
        assertThat(journal.removeFinishedBefore(T0.plusSeconds(50))).isZero();
    }

    @Test
    void concurrentWritersOfOneIntentAllGetTheSameEntry() throws Exception {
        KeyJournal journal = journal();
        int threads = 8;
        CountDownLatch go = new CountDownLatch(1);
        List<Future<JournalEntry>> results = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            for (int i = 0; i < threads; i++) {
                String key = "key-" + i;
                results.add(pool.submit(() -> {
                    go.await(10, TimeUnit.SECONDS);
                    return journal.putIfAbsent(entry("contended", key, T0));
                }));
            }
            go.countDown();
            Set<String> keys = new HashSet<>();
            for (Future<JournalEntry> f : results) {
                keys.add(f.get(30, TimeUnit.SECONDS).key());
            }
            assertThat(keys).hasSize(1);
            assertThat(journal.find(IntentId.of("checkout", "contended"))
                            .orElseThrow()
                            .key())
                    .isEqualTo(keys.iterator().next());
        }
    }
}
