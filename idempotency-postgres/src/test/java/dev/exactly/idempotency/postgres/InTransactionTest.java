package dev.exactly.idempotency.postgres;

import static dev.exactly.idempotency.postgres.TestDatabase.ownerOf;
import static dev.exactly.idempotency.postgres.TestDatabase.randomFingerprint;
import static dev.exactly.idempotency.postgres.TestDatabase.randomKey;
import static dev.exactly.idempotency.postgres.TestDatabase.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.spi.ChangeSubscription;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Business writes and the idempotency record commit or roll back together. A second store instance
 * (another service instance, in effect) watches from outside the transaction, so that every wake-up it
 * sees came through NOTIFY.
 */
class InTransactionTest {
    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofMinutes(10);
    /** Long enough for a NOTIFY that was (wrongly) sent to arrive; nothing is expected in it. */
    private static final Duration QUIET = Duration.ofMillis(300);

    private static TestDatabase database;
    private static PostgresIdempotencyStore store;
    private static PostgresIdempotencyStore observer;

    @BeforeAll
    static void start() {
        database = TestDatabase.create("idem_tx", 8);
        database.execute("""
                CREATE TABLE charges (scope_key text PRIMARY KEY, amount bigint NOT NULL)
                """);
        store = PostgresIdempotencyStore.create(database.pool());
        observer = PostgresIdempotencyStore.create(database.pool());
    }

    @AfterAll
    static void stop() {
        store.close();
        observer.close();
        database.close();
    }

    /** A subscription on the observer whose listener is up and whose connect-time signal is consumed. */
    private static ChangeSubscription watch(ScopeKey key) throws InterruptedException {
        ChangeSubscription subscription = observer.subscribe(key);
        await().atMost(Duration.ofSeconds(5)).until(observer::isListening);
        subscription.await(Duration.ZERO);
        return subscription;
    }

    @Test
    void aReplayOfAFinishedRecordTakesNoTransactionIdAndWaitsForNoRowLock() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = ownerOf(store.claim(key, fp, LONG, RETENTION));
        assertThat(store.complete(key, owner, RecordStatus.COMPLETED, response(201, "{\"id\":\"ch\"}")))
                .isTrue();
        try (Connection locker = database.pool().getConnection();
                Connection tx = database.pool().getConnection()) {
            locker.setAutoCommit(false);
            try (PreparedStatement s =
                    locker.prepareStatement("SELECT 1 FROM idempotency_records WHERE scope_key = ? FOR UPDATE")) {
                s.setString(1, key.hash());
                s.executeQuery().close();
            }
            tx.setAutoCommit(false);
            try (PreparedStatement s = tx.prepareStatement("SET LOCAL lock_timeout = '2s'")) {
                s.execute();
            }

            // the row is locked by another transaction: a claim that locked it would wait, then fail
            ClaimOutcome replay = store.claim(tx, key, fp, LONG, RETENTION);

            assertThat(replay)
                    .isInstanceOfSatisfying(
                            ClaimOutcome.Finished.class,
                            f -> assertThat(f.record().response().status()).isEqualTo(201));
            try (PreparedStatement s = tx.prepareStatement("SELECT txid_current_if_assigned() IS NULL");
                    ResultSet row = s.executeQuery()) {
                assertThat(row.next()).isTrue();
                assertThat(row.getBoolean(1))
                        .as("no transaction id: the replay wrote nothing")
                        .isTrue();
            }
            tx.rollback();
            locker.rollback();
        }
    }

    @Test
    void completionRolledBackWithTheBusinessWriteLeavesTheRecordProcessing() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = ownerOf(store.claim(key, fp, LONG, RETENTION));
        try (ChangeSubscription subscription = watch(key);
                Connection tx = database.pool().getConnection()) {
            tx.setAutoCommit(false);
            insertCharge(tx, key, 1999);
            assertThat(store.complete(tx, key, owner, RecordStatus.COMPLETED, response(201, "{\"id\":\"ch\"}")))
                    .isTrue();
            tx.rollback();

            assertThat(subscription.await(QUIET))
                    .as("no notification for a rolled back completion")
                    .isFalse();
            assertThat(store.find(key).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);
            assertThat(charges(key)).isZero();
            // the owner still owns the key and may finish it
            StoredResponse done = response(201, "{\"id\":\"ch2\"}");
            assertThat(store.complete(key, owner, RecordStatus.COMPLETED, done)).isTrue();
            assertThat(store.find(key).orElseThrow().response()).isEqualTo(done);
        }
    }

    @Test
    void completionCommittedWithTheBusinessWriteWakesWaitersOnCommit() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = ownerOf(store.claim(key, fp, LONG, RETENTION));
        StoredResponse charged = response(201, "{\"id\":\"ch\",\"amount\":1999}");
        try (ChangeSubscription subscription = watch(key);
                Connection tx = database.pool().getConnection()) {
            tx.setAutoCommit(false);
            insertCharge(tx, key, 1999);
            assertThat(store.complete(tx, key, owner, RecordStatus.COMPLETED, charged))
                    .isTrue();
            // the caller sees its own write; nobody else does yet
            assertThat(store.find(tx, key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
            assertThat(observer.find(key).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);
            assertThat(charges(key)).isZero();
            assertThat(subscription.await(QUIET))
                    .as("no notification before commit")
                    .isFalse();

            tx.commit();

            assertThat(subscription.await(Duration.ofSeconds(5)))
                    .as("notified on commit")
                    .isTrue();
            assertThat(observer.find(key).orElseThrow().response()).isEqualTo(charged);
            assertThat(charges(key)).isEqualTo(1);
            assertThat(store.claim(key, fp, LONG, RETENTION)).isInstanceOf(ClaimOutcome.Finished.class);
        }
    }

    @Test
    void aDuplicateArrivingDuringTheTransactionWaitsForItAndSeesTheCommittedResult() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = ownerOf(store.claim(key, fp, LONG, RETENTION));
        try (Connection tx = database.pool().getConnection()) {
            tx.setAutoCommit(false);
            insertCharge(tx, key, 500);
            assertThat(store.complete(tx, key, owner, RecordStatus.COMPLETED, response(201, "{}")))
                    .isTrue();
            CompletableFuture<ClaimOutcome> duplicate =
                    CompletableFuture.supplyAsync(() -> observer.claim(key, fp, LONG, RETENTION));
            // it waits on the record's row lock held by the transaction, and is not answered from a stale state
            int holder = backendPid(tx);
            await().atMost(Duration.ofSeconds(5)).until(() -> blockedBy(holder) > 0);
            assertThat(duplicate).isNotDone();
            tx.commit();
            assertThat(duplicate.get(5, TimeUnit.SECONDS)).isInstanceOf(ClaimOutcome.Finished.class);
        }
    }

    @Test
    void aClaimInsideARolledBackTransactionLeavesNoRecord() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        try (Connection tx = database.pool().getConnection()) {
            tx.setAutoCommit(false);
            ClaimOutcome outcome = store.claim(tx, key, fp, LONG, RETENTION);
            assertThat(outcome).isInstanceOf(ClaimOutcome.Claimed.class);
            insertCharge(tx, key, 100);
            tx.rollback();
        }
        assertThat(store.find(key)).isEmpty();
        assertThat(charges(key)).isZero();

        try (Connection tx = database.pool().getConnection()) {
            tx.setAutoCommit(false);
            OwnerToken owner = ownerOf(store.claim(tx, key, fp, LONG, RETENTION));
            insertCharge(tx, key, 100);
            tx.commit();
            assertThat(store.find(key).orElseThrow().owner()).isEqualTo(owner);
            assertThat(charges(key)).isEqualTo(1);
        }
    }

    @Test
    void aReleaseInsideATransactionTakesEffectAndNotifiesOnCommit() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = ownerOf(store.claim(key, fp, LONG, RETENTION));
        try (ChangeSubscription subscription = watch(key);
                Connection tx = database.pool().getConnection()) {
            tx.setAutoCommit(false);
            assertThat(store.release(tx, key, owner)).isTrue();
            assertThat(observer.find(key)).isPresent();
            assertThat(subscription.await(QUIET)).isFalse();
            tx.commit();
            assertThat(subscription.await(Duration.ofSeconds(5))).isTrue();
            assertThat(observer.find(key)).isEmpty();
        }
    }

    @Test
    void anOwnerWhoLostItsLeaseLearnsItInsideTheTransaction() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken stale = ownerOf(store.claim(key, fp, Duration.ofMillis(100), RETENTION));
        ClaimOutcome taken = await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> observer.claim(key, fp, LONG, RETENTION), o -> o instanceof ClaimOutcome.Claimed);
        try (Connection tx = database.pool().getConnection()) {
            tx.setAutoCommit(false);
            insertCharge(tx, key, 700);
            assertThat(store.renew(tx, key, stale, LONG)).isFalse();
            assertThat(store.complete(tx, key, stale, RecordStatus.COMPLETED, response(201, "{}")))
                    .isFalse();
            tx.rollback(); // as the caller must, when the finish was refused
        }
        assertThat(store.find(key).orElseThrow().owner())
                .isEqualTo(taken.record().owner());
        assertThat(store.find(key).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);
        assertThat(charges(key)).isZero();
    }

    private static void insertCharge(Connection tx, ScopeKey key, long amount) throws SQLException {
        try (PreparedStatement s = tx.prepareStatement("INSERT INTO charges (scope_key, amount) VALUES (?, ?)")) {
            s.setString(1, key.hash());
            s.setLong(2, amount);
            s.executeUpdate();
        }
    }

    private static int charges(ScopeKey key) throws SQLException {
        try (Connection c = database.direct().getConnection();
                PreparedStatement s = c.prepareStatement("SELECT count(*) FROM charges WHERE scope_key = ?")) {
            s.setString(1, key.hash());
            try (ResultSet row = s.executeQuery()) {
                row.next();
                return row.getInt(1);
            }
        }
    }

    private static int backendPid(Connection c) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT pg_backend_pid()");
                ResultSet row = s.executeQuery()) {
            row.next();
            return row.getInt(1);
        }
    }

    /** How many server processes wait for a lock that {@code holder} holds. */
    private static int blockedBy(int holder) throws SQLException {
        try (Connection c = database.direct().getConnection();
                PreparedStatement s = c.prepareStatement(
                        "SELECT count(*) FROM pg_stat_activity WHERE ? = ANY (pg_blocking_pids(pid))")) {
            s.setInt(1, holder);
            try (ResultSet row = s.executeQuery()) {
                row.next();
                return row.getInt(1);
            }
        }
    }
}
