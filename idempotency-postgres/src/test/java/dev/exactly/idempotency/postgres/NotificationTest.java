package dev.exactly.idempotency.postgres;

import static dev.exactly.idempotency.postgres.TestDatabase.ownerOf;
import static dev.exactly.idempotency.postgres.TestDatabase.randomFingerprint;
import static dev.exactly.idempotency.postgres.TestDatabase.randomKey;
import static dev.exactly.idempotency.postgres.TestDatabase.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.spi.ChangeSubscription;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Wake-ups across store instances (as across service instances) come from LISTEN/NOTIFY. */
class NotificationTest {
    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofMinutes(10);

    private static TestDatabase database;

    @BeforeAll
    static void start() {
        database = TestDatabase.create("idem_notify", 8);
    }

    @AfterAll
    static void stop() {
        database.close();
    }

    @Test
    void aWaiterOnAnotherInstanceIsWokenByNotifyWithPollingDisabled() throws Exception {
        try (PostgresIdempotencyStore ownerSide = PostgresIdempotencyStore.create(database.pool());
                PostgresIdempotencyStore waiterSide = PostgresIdempotencyStore.create(database.pool())) {
            startListening(waiterSide);
            IdempotencyEngine owners =
                    IdempotencyEngine.builder(ownerSide).pollInterval(null).build();
            IdempotencyEngine waiters =
                    IdempotencyEngine.builder(waiterSide).pollInterval(null).build();
            // the lease (30 s) outlasts the wait bound (20 s): only a push can end the wait in time
            IdempotencyPolicy policy = IdempotencyPolicy.custom()
                    .lease(LONG)
                    .retention(RETENTION)
                    .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(20)))
                    .build();
            IdempotencyRequest request = IdempotencyRequest.of(
                    new Scope(
                            "tenant",
                            "POST",
                            "/v1/charges",
                            new IdempotencyKey(UUID.randomUUID().toString())),
                    randomFingerprint(),
                    policy);
            StoredResponse original = response(201, "{\"id\":\"ch_notify\"}");
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            AtomicInteger runs = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(3);
            try {
                Future<IdempotentResult> owner = pool.submit(() -> owners.execute(request, lease -> {
                    runs.incrementAndGet();
                    running.countDown();
                    assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
                    return Outcome.complete(original);
                }));
                assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
                Future<IdempotentResult> duplicate = pool.submit(() -> waiters.execute(request, lease -> {
                    runs.incrementAndGet();
                    return Outcome.complete(response(201, "{\"id\":\"ch_duplicate\"}"));
                }));
                await().atMost(Duration.ofSeconds(5)).until(() -> waiterSide.hasLocalWaiters(request.key()));
                long released = System.nanoTime();
                finish.countDown();

                assertThat(owner.get(10, TimeUnit.SECONDS).kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
                IdempotentResult replay = duplicate.get(10, TimeUnit.SECONDS);
                Duration wakeUp = Duration.ofNanos(System.nanoTime() - released);
                assertThat(replay.kind()).isEqualTo(IdempotentResult.Kind.REPLAYED);
                assertThat(replay.response()).isEqualTo(original);
                assertThat(runs).hasValue(1);
                assertThat(wakeUp).isLessThan(Duration.ofSeconds(5));
                System.out.printf("cross-instance wake-up after completion: %d ms%n", wakeUp.toMillis());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void afterTheListenerConnectionIsCutEveryWaiterIsSignalledAndNotifyWorksAgain() throws Exception {
        try (PostgresIdempotencyStore writer = PostgresIdempotencyStore.create(database.pool());
                PostgresIdempotencyStore reader = PostgresIdempotencyStore.create(database.pool())) {
            ScopeKey key = randomKey();
            Fingerprint fp = randomFingerprint();
            OwnerToken owner = ownerOf(writer.claim(key, fp, LONG, RETENTION));
            ChangeSubscription subscription = reader.subscribe(key);
            startListening(reader);
            subscription.await(Duration.ZERO);
            NotificationListener listener = reader.listener();
            assertThat(listener.connections()).isEqualTo(1);

            terminate(listener.backendPid());

            assertThat(subscription.await(Duration.ofSeconds(10)))
                    .as("signalled after reconnecting")
                    .isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> listener.connections() == 2 && reader.isListening());
            subscription.await(Duration.ZERO);
            assertThat(writer.complete(key, owner, RecordStatus.COMPLETED, response(201, "{}")))
                    .isTrue();
            assertThat(subscription.await(Duration.ofSeconds(5)))
                    .as("NOTIFY after reconnecting")
                    .isTrue();
            subscription.close();
        }
    }

    @Test
    void subscribingMarksTheRecordInFlightOnceAndOnlyIt() throws Exception {
        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(database.pool())) {
            ScopeKey key = randomKey();
            ownerOf(store.claim(key, randomFingerprint(), LONG, RETENTION));
            store.subscribe(key).close();
            String marked = rowVersion(key);
            for (int i = 0; i < 100; i++) {
                store.subscribe(key).close();
            }
            assertThat(rowVersion(key)).as("later subscriptions write nothing").isEqualTo(marked);

            ScopeKey absent = randomKey();
            store.subscribe(absent).close();
            assertThat(store.find(absent))
                    .as("a subscription creates no record")
                    .isEmpty();
        }
    }

    /** The row's xmin and waiters flag: a new row version has a new xmin. */
    private static String rowVersion(ScopeKey key) throws SQLException {
        try (Connection c = database.direct().getConnection();
                PreparedStatement s = c.prepareStatement(
                        "SELECT xmin::text || ':' || waiters FROM idempotency_records WHERE scope_key = ?")) {
            s.setString(1, key.hash());
            try (ResultSet row = s.executeQuery()) {
                assertThat(row.next()).isTrue();
                String version = row.getString(1);
                assertThat(version).endsWith(":true");
                return version;
            }
        }
    }

    @Test
    void aNotificationForAnotherKeyDoesNotWakeAWaiter() throws Exception {
        try (PostgresIdempotencyStore writer = PostgresIdempotencyStore.create(database.pool());
                PostgresIdempotencyStore reader = PostgresIdempotencyStore.create(database.pool())) {
            ScopeKey watched = randomKey();
            ScopeKey other = randomKey();
            OwnerToken owner = ownerOf(writer.claim(other, randomFingerprint(), LONG, RETENTION));
            try (ChangeSubscription subscription = reader.subscribe(watched);
                    ChangeSubscription control = reader.subscribe(other)) {
                startListening(reader);
                subscription.await(Duration.ZERO);
                control.await(Duration.ZERO);
                assertThat(writer.release(other, owner)).isTrue();
                assertThat(control.await(Duration.ofSeconds(5))).isTrue();
                assertThat(subscription.await(Duration.ZERO)).isFalse();
            }
        }
    }

    // ------------------------------------------------------------------------------- helpers

    private static void startListening(PostgresIdempotencyStore store) {
        store.subscribe(randomKey()).close();
        await().atMost(Duration.ofSeconds(5)).until(store::isListening);
    }

    private static void terminate(int backendPid) throws SQLException {
        try (Connection c = database.direct().getConnection();
                PreparedStatement s = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
            s.setInt(1, backendPid);
            try (ResultSet row = s.executeQuery()) {
                assertThat(row.next() && row.getBoolean(1)).isTrue();
            }
        }
    }
}
