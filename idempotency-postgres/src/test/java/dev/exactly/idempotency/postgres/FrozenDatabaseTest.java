package dev.exactly.idempotency.postgres;

import static dev.exactly.idempotency.postgres.TestDatabase.randomFingerprint;
import static dev.exactly.idempotency.postgres.TestDatabase.randomKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.testing.HeldConnection;
import dev.exactly.testing.OwnPostgres;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL that stops answering (every process of it {@code SIGSTOP}ped: a frozen machine, a network
 * that drops packets) under a connection the store already holds. The statement's cancel goes unanswered
 * too, so the store aborts the connection one more timeout later: the call fails closed within a bound
 * (the statement timeout, then the driver's {@code cancelSignalTimeout}, which it waits out for the
 * unanswered cancel), instead of waiting, with its caller and its key, for as long as the server stays
 * frozen.
 */
class FrozenDatabaseTest {
    private OwnPostgres postgres;
    private Connection physical;

    @BeforeEach
    void start() throws Exception {
        postgres = OwnPostgres.start(Files.createTempDirectory("exactly-frozen-").resolve("pg"));
        PGSimpleDataSource direct = (PGSimpleDataSource) postgres.dataSource();
        // the driver's own bound on a cancel request (10 s by default), which the statement waits out
        direct.setCancelSignalTimeout(2);
        physical = direct.getConnection();
    }

    @AfterEach
    void stop() throws Exception {
        try {
            postgres.thaw();
            physical.close();
        } finally {
            postgres.close();
        }
    }

    @Test
    void aStatementToAFrozenServerFailsClosedWithinABound() throws Exception {
        PostgresIdempotencyStore.migrate(postgres.dataSource());
        PostgresStoreConfig config = PostgresStoreConfig.custom().statementTimeout(Duration.ofSeconds(1)).build();
        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(HeldConnection.of(physical), config)) {
            assertThat(store.claim(randomKey(), randomFingerprint(), Duration.ofSeconds(10), Duration.ofMinutes(1)))
                    .isInstanceOf(ClaimOutcome.Claimed.class);

            postgres.freeze();
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
            assertThat(physical.isClosed()).as("the connection was aborted").isTrue();
        }
    }
}
