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
import java.util.ArrayList;
import java.util.List;
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
        PostgresStoreConfig config = PostgresStoreConfig.custom()
                .statementTimeout(Duration.ofSeconds(1))
                .build();
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
                    .cause()
                    .isInstanceOf(StoreUnavailableException.class)
                    .cause()
                    .isInstanceOf(SQLException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("the timeout, then the cancel's own")
                    .isLessThan(Duration.ofSeconds(6));
            assertThat(server.physical().isClosed())
                    .as("the connection was aborted")
                    .isTrue();
        }
    }

    /**
     * Many claims at once against a frozen server, through a pool and one lane for fresh keys: the claim alone in
     * the lane fails when its statement's bound runs out, and the claims queued behind it fail with it instead of
     * each waiting out a bound of its own in turn; nothing waits for as long as the server stays frozen.
     */
    @Test
    void claimsQueuedBehindAStatementToAFrozenServerFailWithIt() throws Exception {
        PostgresIdempotencyStore.migrate(server.dataSource());
        com.zaxxer.hikari.HikariConfig poolConfig = new com.zaxxer.hikari.HikariConfig();
        poolConfig.setJdbcUrl(server.jdbcUrl());
        poolConfig.setMaximumPoolSize(4);
        poolConfig.setMinimumIdle(4);
        poolConfig.setConnectionTimeout(1000);
        poolConfig.setValidationTimeout(250);
        poolConfig.addDataSourceProperty("cancelSignalTimeout", "2");
        poolConfig.addDataSourceProperty("connectTimeout", "1");
        PostgresStoreConfig config = PostgresStoreConfig.custom()
                .statementTimeout(Duration.ofSeconds(1))
                .sharedStatementLanes(1)
                .build();
        try (com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource(poolConfig);
                PostgresIdempotencyStore store = PostgresIdempotencyStore.create(pool, config);
                var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            store.claimFirst("insert");
            assertThat(store.claim(randomKey(), randomFingerprint(), Duration.ofSeconds(10), Duration.ofMinutes(1)))
                    .isInstanceOf(ClaimOutcome.Claimed.class);

            server.freeze();
            long start = System.nanoTime();
            List<CompletableFuture<ClaimOutcome>> claims = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                claims.add(CompletableFuture.supplyAsync(
                        () -> store.claim(
                                randomKey(), randomFingerprint(), Duration.ofSeconds(10), Duration.ofMinutes(1)),
                        threads));
            }
            for (CompletableFuture<ClaimOutcome> claim : claims) {
                assertThatThrownBy(() -> claim.get(30, TimeUnit.SECONDS))
                        .as("every claim ends while the server is still frozen")
                        .isInstanceOf(ExecutionException.class)
                        .cause()
                        .isInstanceOf(StoreUnavailableException.class);
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("one statement's bound (the timeout, then the cancel's own), not one per claim in turn")
                    .isLessThan(Duration.ofSeconds(12));
        }
    }
}
