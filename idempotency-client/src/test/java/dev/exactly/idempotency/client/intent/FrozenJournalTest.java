package dev.exactly.idempotency.client.intent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.testing.HeldConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The journal's database stops answering (every process of it {@code SIGSTOP}ped) under a connection it
 * holds: the write of a new key, which comes before anything is sent, fails with {@link KeyJournalException}
 * within a bound (nothing was sent) instead of holding the caller for as long as the server stays frozen,
 * which the query timeout alone did not prevent (its cancel goes unanswered too).
 */
class FrozenJournalTest {
    private HeldConnection server;

    @BeforeEach
    void start() {
        server = HeldConnection.start("exactly-frozen-journal-");
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void writingAKeyToAFrozenDatabaseFailsWithinABound() throws Exception {
        JdbcKeyJournal.createTable(server.dataSource());
        KeyJournal journal = JdbcKeyJournal.create(server.dataSource(), Duration.ofSeconds(1));
        journal.putIfAbsent(KeyJournalContract.entry("order-1", "key-1", Instant.now()));

        server.freeze();
        long start = System.nanoTime();
        CompletableFuture<JournalEntry> frozen = CompletableFuture.supplyAsync(
                () -> journal.putIfAbsent(KeyJournalContract.entry("order-2", "key-2", Instant.now())),
                Executors.newVirtualThreadPerTaskExecutor());
        assertThatThrownBy(() -> frozen.get(30, TimeUnit.SECONDS))
                .as("the write ends while the database is still frozen")
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(KeyJournalException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(8));
    }
}
