package dev.exactly.idempotency.postgres;

import static dev.exactly.idempotency.postgres.TestDatabase.randomFingerprint;
import static dev.exactly.idempotency.postgres.TestDatabase.randomKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.testing.HeldConnection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A PostgreSQL that stops answering (every process of it {@code SIGSTOP}ped: a frozen machine, a network
 * that drops packets) under a connection the store already holds. The statement's cancel goes unanswered
 * too, so the store aborts the connection one more timeout later: the call fails closed within a bound
 * (the statement timeout, then the driver's {@code cancelSignalTimeout}, which it waits out for the
 * unanswered cancel), instead of waiting, with its caller and its key, for as long as the server stays
 * frozen.
 */
class FrozenDatabaseTest {
    private HeldConnection server;

    @BeforeEach
    void start() {
        server = HeldConnection.start("exactly-frozen-");
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void aStatementToAFrozenServerFailsClosedWithinABound() throws Exception {
        PostgresIdempotencyStore.migrate(server.dataSource());
        PostgresStoreConfig config = PostgresStoreConfig.custom().statementTimeout(Duration.ofSeconds(1)).build();
        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(server.dataSource(), config)) {
            assertThat(store.claim(randomKey(), randomFingerprint(), Duration.ofSeconds(10), Duration.ofMinutes(1)))
                    .isInstanceOf(ClaimOutcome.Claimed.class);

            server.freeze();
            long start = System.nanoTime();
            CompletableFuture<ClaimOutcome> frozen = CompletableFuture.supplyAsync(
                    () -> store.claim(randomKey(), randomFingerprint(), Duration.ofSeconds(10), Duration.ofMinutes(1)),
                    Executors.newVirtualThreadPerTaskExecutor());
            assertThatThrownBy(() -> frozen.get(20, TimeUnit.SECONDS))
                    .as("the claim ends while the server is still frozen")
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(StoreUnavailableException.class)
                    .cause().isInstanceOf(SQLException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the timeout, then the cancel's own")
                    .isLessThan(Duration.ofSeconds(6));
            assertThat(server.physical().isClosed()).as("the connection was aborted").isTrue();
        }
    }
}
