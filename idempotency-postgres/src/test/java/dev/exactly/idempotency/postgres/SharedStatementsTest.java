package dev.exactly.idempotency.postgres;

import static dev.exactly.idempotency.postgres.TestDatabase.randomFingerprint;
import static dev.exactly.idempotency.postgres.TestDatabase.randomKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.spi.ChangeSubscription;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Claims and completions sharing statements on a real database: while every lane is busy (held here by a lock
 * on the table that the first write waits for), the writes that queue run as shared statements, and each caller
 * gets what its own statement would have given it.
 */
class SharedStatementsTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofMinutes(10);
    private static final int CALLERS = 40;

    private static TestDatabase database;
    private static PostgresIdempotencyStore store;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    @BeforeAll
    static void start() {
        database = TestDatabase.create("idem_shared", 8);
        store = PostgresIdempotencyStore.create(
                database.pool(),
                PostgresStoreConfig.custom()
                        .sharedStatementLanes(1)
                        .maxSharedWrites(16)
                        .build());
    }

    /** Claims share statements while the store sends the insert first: while most keys lately were fresh. */
    @BeforeEach
    void insertFirst() {
        store.claimFirst("insert");
    }

    @AfterAll
    static void stop() {
        store.close();
        database.close();
    }

    /**
     * Runs calls ({@code call}) at once while a transaction holds a lock that makes the first write wait, until the
     * others have queued behind it ({@code queued}); then lets them go and returns their results.
     */
    private <T> List<T> whileTheLaneIsHeld(String lock, IntFunction<T> call, java.util.function.IntSupplier queued)
            throws Exception {
        List<Future<T>> results = new ArrayList<>();
        try (Connection holder = database.direct().getConnection();
                Statement s = holder.createStatement()) {
            holder.setAutoCommit(false);
            s.execute(lock);
            for (int i = 0; i < CALLERS; i++) {
                int n = i;
                results.add(threads.submit(() -> call.apply(n)));
            }
            await().atMost(20, TimeUnit.SECONDS).until(() -> queued.getAsInt() == CALLERS - 1);
            holder.commit();
        }
        List<T> answers = new ArrayList<>();
        for (Future<T> result : results) {
            answers.add(result.get(30, TimeUnit.SECONDS));
        }
        return answers;
    }

    private static String lockAgainstWrites() {
        return "LOCK TABLE idempotency_records IN SHARE MODE";
    }

    @Test
    void queuedClaimsAndCompletionsShareStatementsAndEachCallerGetsItsOwnRecord() throws Exception {
        List<ScopeKey> keys = new ArrayList<>();
        List<Fingerprint> fingerprints = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            keys.add(randomKey());
            fingerprints.add(randomFingerprint());
        }
        long sharedBefore = store.sharedWrites();
        List<ClaimOutcome> claims = whileTheLaneIsHeld(
                lockAgainstWrites(),
                i -> store.claim(keys.get(i), fingerprints.get(i), LEASE, RETENTION),
                store::claimsQueued);
        assertThat(store.sharedWrites() - sharedBefore).isEqualTo(CALLERS - 1);
        List<OwnerToken> owners = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            ClaimOutcome.Claimed claimed = (ClaimOutcome.Claimed) claims.get(i);
            owners.add(claimed.owner());
            IdempotencyRecord stored = store.find(keys.get(i)).orElseThrow();
            assertThat(stored.status()).isEqualTo(RecordStatus.PROCESSING);
            assertThat(stored.owner()).isEqualTo(claimed.owner());
            assertThat(stored.fingerprint()).isEqualTo(fingerprints.get(i));
            assertThat(stored.createdAt()).isEqualTo(claimed.record().createdAt());
            assertThat(stored.leaseExpiresAt()).isEqualTo(claimed.record().leaseExpiresAt());
            assertThat(stored.expiresAt()).isEqualTo(claimed.record().expiresAt());
        }

        List<StoredResponse> responses = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            responses.add(response(i));
        }
        long completedBefore = store.sharedWrites();
        List<Boolean> done = whileTheLaneIsHeld(
                lockAgainstWrites(),
                i -> store.complete(
                        keys.get(i),
                        owners.get(i),
                        i % 7 == 0 ? RecordStatus.FAILED : RecordStatus.COMPLETED,
                        responses.get(i)),
                store::completionsQueued);
        assertThat(done).containsOnly(true);
        assertThat(store.sharedWrites() - completedBefore).isEqualTo(CALLERS - 1);
        for (int i = 0; i < CALLERS; i++) {
            IdempotencyRecord stored = store.find(keys.get(i)).orElseThrow();
            assertThat(stored.status()).isEqualTo(i % 7 == 0 ? RecordStatus.FAILED : RecordStatus.COMPLETED);
            assertThat(stored.response().status()).isEqualTo(responses.get(i).status());
            assertThat(stored.response().headers()).isEqualTo(responses.get(i).headers());
            assertThat(stored.response().body()).isEqualTo(responses.get(i).body());
            assertThat(store.claim(keys.get(i), fingerprints.get(i), LEASE, RETENTION))
                    .isInstanceOf(ClaimOutcome.Finished.class);
        }
    }

    /** Headers of every shape: none, one, a name with several values, several names; bodies of every size. */
    private static StoredResponse response(int i) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        if (i % 4 >= 1) {
            headers.put("content-type", List.of("application/json"));
        }
        if (i % 4 >= 2) {
            headers.put("set-cookie", List.of("a=" + i, "b=" + i));
        }
        if (i % 4 == 3) {
            headers.put("x-odd", List.of("{\"quoted,\" \\ value}", "NULL", ""));
        }
        byte[] body = ("{\"n\":" + i + "}").repeat(i % 5 == 0 ? 0 : i * 37).getBytes(StandardCharsets.UTF_8);
        return new StoredResponse(200 + i, headers, body);
    }

    @Test
    void callersOfOneKeyInOneSharedStatementClaimItOnceAndTheOthersSeeItInFlight() throws Exception {
        ScopeKey contested = randomKey();
        Fingerprint fingerprint = randomFingerprint();
        List<ScopeKey> keys = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            keys.add(i % 2 == 0 ? contested : randomKey());
        }
        List<ClaimOutcome> claims = whileTheLaneIsHeld(
                lockAgainstWrites(), i -> store.claim(keys.get(i), fingerprint, LEASE, RETENTION), store::claimsQueued);
        long claimedContested = 0;
        for (int i = 0; i < CALLERS; i++) {
            if (keys.get(i).equals(contested)) {
                if (claims.get(i) instanceof ClaimOutcome.Claimed claimed) {
                    claimedContested++;
                    assertThat(store.find(contested).orElseThrow().owner()).isEqualTo(claimed.owner());
                } else {
                    assertThat(claims.get(i)).isInstanceOf(ClaimOutcome.InFlight.class);
                }
            } else {
                assertThat(claims.get(i)).isInstanceOf(ClaimOutcome.Claimed.class);
            }
        }
        assertThat(claimedContested).isEqualTo(1);
    }

    @Test
    void aCompletionByAnOwnerWhoLostTheRecordFailsAloneInItsSharedStatement() throws Exception {
        List<ScopeKey> keys = new ArrayList<>();
        List<OwnerToken> owners = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            ScopeKey key = randomKey();
            keys.add(key);
            ClaimOutcome claimed = store.claim(key, randomFingerprint(), LEASE, RETENTION);
            owners.add(i % 3 == 1 ? OwnerToken.random() : ((ClaimOutcome.Claimed) claimed).owner());
        }
        List<Boolean> done = whileTheLaneIsHeld(
                lockAgainstWrites(),
                i -> store.complete(keys.get(i), owners.get(i), RecordStatus.COMPLETED, response(i)),
                store::completionsQueued);
        for (int i = 0; i < CALLERS; i++) {
            assertThat(done.get(i)).as("completion %d", i).isEqualTo(i % 3 != 1);
            assertThat(store.find(keys.get(i)).orElseThrow().status())
                    .isEqualTo(i % 3 == 1 ? RecordStatus.PROCESSING : RecordStatus.COMPLETED);
        }
    }

    @Test
    void aSharedCompletionOfARecordSomebodyWaitsForWakesAnotherInstance() throws Exception {
        ScopeKey watched = randomKey();
        OwnerToken owner = ((ClaimOutcome.Claimed) store.claim(watched, randomFingerprint(), LEASE, RETENTION)).owner();
        List<ScopeKey> keys = new ArrayList<>();
        List<OwnerToken> owners = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            ScopeKey key = i == CALLERS / 2 ? watched : randomKey();
            keys.add(key);
            owners.add(
                    key.equals(watched)
                            ? owner
                            : ((ClaimOutcome.Claimed) store.claim(key, randomFingerprint(), LEASE, RETENTION)).owner());
        }
        try (PostgresIdempotencyStore other = PostgresIdempotencyStore.create(database.pool());
                ChangeSubscription subscription = other.subscribe(watched)) {
            await().atMost(10, TimeUnit.SECONDS).until(other::isListening);
            List<Boolean> done = whileTheLaneIsHeld(
                    lockAgainstWrites(),
                    i -> store.complete(keys.get(i), owners.get(i), RecordStatus.COMPLETED, response(i)),
                    store::completionsQueued);
            assertThat(done).containsOnly(true);
            assertThat(subscription.await(Duration.ofSeconds(10))).isTrue();
        }
    }

    /**
     * A key claimed inside a caller's transaction that stays open: claims of it on the store's connections wait for
     * that transaction until their statement timeout, alone in their lane or in a shared statement, and the claims
     * of other keys queued behind them or sharing their statement are claimed all the same (the server answered the
     * timeout's cancel: it is up).
     */
    @Test
    void aClaimThatTimesOutWaitingForAnOpenTransactionFailsAloneAndTheOthersAreClaimed() throws Exception {
        ScopeKey held = randomKey();
        Fingerprint fingerprint = randomFingerprint();
        try (PostgresIdempotencyStore timed = PostgresIdempotencyStore.create(
                        database.pool(),
                        PostgresStoreConfig.custom()
                                .statementTimeout(Duration.ofSeconds(1))
                                .sharedStatementLanes(1)
                                .maxSharedWrites(16)
                                .build());
                Connection caller = database.direct().getConnection()) {
            timed.claimFirst("insert");
            caller.setAutoCommit(false);
            assertThat(timed.claim(caller, held, fingerprint, LEASE, RETENTION))
                    .isInstanceOf(ClaimOutcome.Claimed.class);

            // the first claim of the held key takes the lane and waits; one more of it and the others queue
            List<Future<ClaimOutcome>> first =
                    List.of(threads.submit(() -> timed.claim(held, fingerprint, LEASE, RETENTION)));
            await().atMost(10, TimeUnit.SECONDS).until(() -> lockWaiters() >= 1);
            List<ScopeKey> keys = new ArrayList<>();
            List<Future<ClaimOutcome>> queued = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                ScopeKey key = i == 3 ? held : randomKey();
                keys.add(key);
                queued.add(threads.submit(() -> timed.claim(key, fingerprint, LEASE, RETENTION)));
                int n = i + 1;
                await().atMost(10, TimeUnit.SECONDS).until(() -> timed.claimsQueued() == n);
            }
            assertThatThrownBy(() -> first.getFirst().get(20, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("did not answer in time");
            for (int i = 0; i < keys.size(); i++) {
                Future<ClaimOutcome> claim = queued.get(i);
                if (keys.get(i).equals(held)) {
                    assertThatThrownBy(() -> claim.get(20, TimeUnit.SECONDS))
                            .hasCauseInstanceOf(StoreUnavailableException.class);
                } else {
                    assertThat(claim.get(20, TimeUnit.SECONDS)).isInstanceOf(ClaimOutcome.Claimed.class);
                }
            }
            caller.rollback();
        }
    }

    /** Sessions of the test's database waiting for a lock right now, as a claim of the held key does. */
    private static int lockWaiters() throws Exception {
        try (Connection c = database.direct().getConnection();
                Statement s = c.createStatement();
                java.sql.ResultSet r =
                        s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                + " AND datname = current_database()")) {
            r.next();
            return r.getInt(1);
        }
    }
}
