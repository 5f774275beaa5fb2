package dev.exactly.idempotency.client.intent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.client.IdempotencyKeyReusedException;
import dev.exactly.idempotency.client.IdempotentClientListener;
import dev.exactly.idempotency.client.IdempotentHttpClient;
import dev.exactly.idempotency.client.IdempotentRequest;
import dev.exactly.idempotency.client.IdempotentResponse;
import dev.exactly.idempotency.client.RetriesExhaustedException;
import dev.exactly.idempotency.client.RetryPolicy;
import dev.exactly.testing.ScriptedHttpServer;
import dev.exactly.testing.ScriptedHttpServer.Received;
import dev.exactly.testing.ScriptedHttpServer.Reply;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Journaled intents against a real HTTP server, with a file journal reopened as after a restart. */
class IntentClientTest {
    private static final IntentId ORDER = IntentId.of("checkout", "order-1001");
    private static final byte[] BODY = "{\"amount\":4999,\"currency\":\"usd\"}".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private final ScriptedHttpServer server = ScriptedHttpServer.start();
    private final HttpClient http = HttpClient.newHttpClient();
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-04T10:15:00Z"));
    private final InstantSource clock = now::get;
    private final List<String> journaledAtFirstByte = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        server.close();
        http.close();
    }

    private IntentClient intents(KeyJournal journal, RetryPolicy policy) {
        IdempotentHttpClient client = IdempotentHttpClient.builder(http)
                .policy(policy)
                .clock(clock)
                .sleeper(d -> {})
                .listener(new IdempotentClientListener() {
                    @Override
                    public void attemptStarted(Attempt attempt) {
                        // what the journal holds when the attempt is about to go out
                        journaledAtFirstByte.add(
                                journal.find(ORDER).map(JournalEntry::key).orElse("nothing"));
                    }
                })
                .build();
        return IntentClient.builder(client, journal)
                .clock(clock)
                .retention(Duration.ofHours(24))
                .build();
    }

    private IdempotentRequest request() {
        return IdempotentRequest.builder("POST", server.uri("/v1/charges"))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer sk_test_secret")
                .body(BODY)
                .build();
    }

    @Test
    void theKeyIsJournaledBeforeTheFirstByteAndEveryAttemptCarriesIt() throws Exception {
        server.reply(Reply.status(503), Reply.json(201, "{\"id\":\"ch_1\"}"));
        FileKeyJournal journal = FileKeyJournal.open(dir);

        IdempotentResponse answer = intents(journal, RetryPolicy.ofDefaults()).send(ORDER, request());

        JournalEntry entry = journal.find(ORDER).orElseThrow();
        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.key()).isEqualTo(entry.key());
        assertThat(journaledAtFirstByte).containsExactly(entry.key(), entry.key());
        assertThat(server.received())
                .extracting(r -> r.header("Idempotency-Key"))
                .containsExactly(entry.key(), entry.key());
        assertThat(entry.finished()).isTrue();
        assertThat(entry.finalStatus()).isEqualTo(201);
    }

    @Test
    void afterARestartTheSameIntentResumesWithTheSameKeyAndTheSameBytes() throws Exception {
        server.reply(Reply.drop(), Reply.drop(), Reply.drop());
        RetryPolicy threeAttempts = RetryPolicy.custom().maxAttempts(3).build();
        assertThatThrownBy(
                        () -> intents(FileKeyJournal.open(dir), threeAttempts).send(ORDER, request()))
                .isInstanceOf(RetriesExhaustedException.class);

        // a new process: a new journal instance on the same directory, and a request built again
        IntentClient restarted = intents(FileKeyJournal.open(dir), threeAttempts);
        assertThat(restarted.pending()).extracting(JournalEntry::intent).containsExactly(ORDER);
        server.reply(Reply.json(201, "{\"id\":\"ch_1\"}").header("Idempotent-Replayed", "true"));
        IdempotentResponse answer = restarted.send(ORDER, request());

        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.replayed()).isTrue();
        List<Received> received = server.received();
        assertThat(received).hasSize(4);
        assertThat(received).extracting(r -> r.header("Idempotency-Key")).containsOnly(answer.key());
        assertThat(received).allSatisfy(r -> {
            assertThat(r.body()).isEqualTo(BODY);
            assertThat(r.header("Authorization")).isEqualTo("Bearer sk_test_secret");
        });
        assertThat(restarted.pending()).isEmpty();
    }

    @Test
    void resumeSendsTheJournaledRequestWithCredentialsThatWereNeverJournaled() throws Exception {
        FileKeyJournal journal = FileKeyJournal.open(dir);
        server.reply(Reply.status(503));
        assertThatThrownBy(() -> intents(journal, RetryPolicy.noRetries()).send(ORDER, request()))
                .isInstanceOf(RetriesExhaustedException.class);
        List<String> entries;
        try (var files = java.nio.file.Files.list(dir)) {
            entries = files.filter(p -> p.toString().endsWith(".entry"))
                    .map(p -> {
                        try {
                            return java.nio.file.Files.readString(p, StandardCharsets.ISO_8859_1);
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    })
                    .toList();
        }
        assertThat(entries)
                .singleElement()
                .asString()
                .doesNotContain("sk_test_secret")
                .doesNotContainIgnoringCase("authorization");

        server.reply(Reply.json(201, "{}"));
        IntentClient restarted = intents(FileKeyJournal.open(dir), RetryPolicy.noRetries());
        JournalEntry pending = restarted.pending().getFirst();
        IdempotentResponse answer = restarted
                .resume(pending.intent(), Map.of("Authorization", "Bearer sk_test_secret"))
                .orElseThrow();

        assertThat(answer.status()).isEqualTo(201);
        Received last = server.received().getLast();
        assertThat(last.header("Authorization")).isEqualTo("Bearer sk_test_secret");
        assertThat(last.header("Idempotency-Key")).isEqualTo(pending.key());
        assertThat(last.body()).isEqualTo(BODY);
        assertThat(restarted.resume(IntentId.of("checkout", "unknown"), Map.of()))
                .isEmpty();
    }

    @Test
    void aDifferentRequestForAJournaledIntentIsRefusedAndNothingIsSent() throws Exception {
        FileKeyJournal journal = FileKeyJournal.open(dir);
        IntentClient intents = intents(journal, RetryPolicy.ofDefaults());
        intents.send(ORDER, request());

        IdempotentRequest otherAmount = IdempotentRequest.postJson(
                server.uri("/v1/charges"), "{\"amount\":5000,\"currency\":\"usd\"}".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> intents.send(ORDER, otherAmount))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("journaled with a different request");
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @Test
    void aFinishedIntentKeepsItsKeyForTheRetentionThenItIsRemoved() throws Exception {
        InMemoryKeyJournal journal = new InMemoryKeyJournal();
        IntentClient intents = intents(journal, RetryPolicy.ofDefaults());
        String first = intents.send(ORDER, request()).key();

        now.set(now.get().plus(Duration.ofHours(23)));
        assertThat(intents.send(ORDER, request()).key())
                .as("a repeat within the retention")
                .isEqualTo(first);

        now.set(now.get().plus(Duration.ofHours(25)));
        assertThat(intents.purgeExpired()).isEqualTo(1);
        assertThat(journal.size()).isZero();
        assertThat(intents.send(ORDER, request()).key())
                .as("after the retention the intent id is new")
                .isNotEqualTo(first);
    }

    @Test
    void aKeyThatCannotBeJournaledIsNeverSent() throws Exception {
        Path gone = dir.resolve("gone");
        FileKeyJournal journal = FileKeyJournal.open(gone);
        // the journal's directory disappears under it and a plain file takes its place: every write fails
        java.nio.file.Files.delete(gone.resolve("journal.lock"));
        java.nio.file.Files.delete(gone);
        java.nio.file.Files.writeString(gone, "not a directory");

        assertThatThrownBy(() -> intents(journal, RetryPolicy.ofDefaults()).send(ORDER, request()))
                .isInstanceOf(KeyJournalException.class);
        assertThat(server.requestCount()).isZero();
    }

    @Test
    void aReusedKeyFinishesTheIntentAndIsNotRetried() {
        InMemoryKeyJournal journal = new InMemoryKeyJournal();
        server.reply(Reply.json(422, "{\"type\":\"https://exactly.dev/problems/idempotency-key-reused\"}"));

        assertThatThrownBy(() -> intents(journal, RetryPolicy.ofDefaults()).send(ORDER, request()))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(journal.find(ORDER).orElseThrow().finalStatus()).isEqualTo(422);
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @Test
    void aRecordedConflictFinishesTheIntentInsteadOfLeavingItPending() throws Exception {
        String voided = "{\"type\":\"https://exactly.dev/problems/charge-voided\",\"status\":409}";
        server.reply(Reply.json(409, voided).header("Idempotent-Replayed", "true"));
        FileKeyJournal journal = FileKeyJournal.open(dir);
        IdempotentResponse answer = intents(journal, RetryPolicy.ofDefaults()).send(ORDER, request());
        assertThat(answer.status()).isEqualTo(409);
        assertThat(journal.pending()).isEmpty();
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @Test
    void anAnswerInHandIsReturnedWhenTheJournalCannotMarkItFinished() throws Exception {
        server.reply(Reply.json(201, "{\"id\":\"ch_1\"}"));
        FileKeyJournal journal = FileKeyJournal.open(dir);
        // the caller's thread is interrupted right after the answer came (a Future.cancel, an executor shut down):
        // an interrupted thread cannot take the journal's file lock
        IdempotentHttpClient client = IdempotentHttpClient.builder(http)
                .clock(clock)
                .sleeper(d -> {})
                .listener(new IdempotentClientListener() {
                    @Override
                    public void attemptAnswered(
                            Attempt attempt, int status, java.net.http.HttpHeaders headers, byte[] body) {
                        Thread.currentThread().interrupt();
                    }
                })
                .build();
        IntentClient intents =
                IntentClient.builder(client, journal).clock(clock).build();
        try {
            IdempotentResponse answer = intents.send(ORDER, request());
            assertThat(answer.status()).isEqualTo(201);
            assertThat(Thread.currentThread().isInterrupted())
                    .as("the interrupt is kept for the caller")
                    .isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(journal.pending())
                .as("finished: the lock was taken with the interrupt set aside")
                .isEmpty();
    }

    @Test
    void aJournalThatFailsToFinishLeavesTheEntryPendingAndTheAnswerStands() throws Exception {
        server.reply(
                Reply.json(201, "{\"id\":\"ch_1\"}"),
                Reply.json(201, "{\"id\":\"ch_1\"}").header("Idempotent-Replayed", "true"));
        InMemoryKeyJournal memory = new InMemoryKeyJournal();
        KeyJournal failingFinish = new KeyJournal() {
            @Override
            public JournalEntry putIfAbsent(JournalEntry entry) {
                return memory.putIfAbsent(entry);
            }

            @Override
            public java.util.Optional<JournalEntry> find(IntentId intent) {
                return memory.find(intent);
            }

            @Override
            public boolean finish(IntentId intent, String key, int status, Instant at) {
                throw new KeyJournalException("the journal's database is away", new java.sql.SQLException("gone"));
            }

            @Override
            public List<JournalEntry> pending() {
                return memory.pending();
            }

            @Override
            public int removeFinishedBefore(Instant cutoff) {
                return memory.removeFinishedBefore(cutoff);
            }
        };
        IntentClient intents = intents(failingFinish, RetryPolicy.ofDefaults());
        assertThat(intents.send(ORDER, request()).status()).isEqualTo(201);
        assertThat(intents.pending()).extracting(JournalEntry::intent).containsExactly(ORDER);
        IdempotentResponse resumed = intents.resume(ORDER, java.util.Map.of()).orElseThrow();
        assertThat(resumed.replayed()).isTrue();
        assertThat(server.received())
                .extracting(r -> r.header("Idempotency-Key"))
                .containsOnly(journaledAtFirstByte.getFirst());
    }

    @Test
    void aPendingIntentOlderThanTheRetentionIsNotSentAgain() throws Exception {
        FileKeyJournal journal = FileKeyJournal.open(dir);
        Instant longAgo = now.get().minus(Duration.ofHours(25));
        JournalEntry stale = journal.putIfAbsent(JournalEntry.pending(ORDER, "key-of-yesterday", request(), longAgo));
        IntentClient intents = intents(journal, RetryPolicy.ofDefaults());
        assertThatThrownBy(() -> intents.send(ORDER, request()))
                .isInstanceOfSatisfying(IntentExpiredException.class, e -> {
                    assertThat(e.key()).isEqualTo("key-of-yesterday");
                    assertThat(e.createdAt()).isEqualTo(longAgo);
                });
        assertThatThrownBy(() -> intents.resume(ORDER, java.util.Map.of())).isInstanceOf(IntentExpiredException.class);
        assertThat(server.requestCount())
                .as("nothing was sent under a key the server may have forgotten")
                .isZero();
        assertThat(journal.pending()).containsExactly(stale);
    }
}
