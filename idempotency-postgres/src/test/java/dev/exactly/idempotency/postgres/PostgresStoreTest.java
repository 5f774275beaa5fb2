package dev.exactly.idempotency.postgres;

import static dev.exactly.idempotency.postgres.TestDatabase.ownerOf;
import static dev.exactly.idempotency.postgres.TestDatabase.randomFingerprint;
import static dev.exactly.idempotency.postgres.TestDatabase.randomKey;
import static dev.exactly.idempotency.postgres.TestDatabase.response;
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
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.ds.PGSimpleDataSource;

/** What the contract does not cover: PostgreSQL specifics, raw races on the SQL, timeouts, purge. */
class PostgresStoreTest {
    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofMinutes(10);

    private static TestDatabase database;
    private static PostgresIdempotencyStore store;

    @BeforeAll
    static void start() {
        database = TestDatabase.create("idem_store", 12);
        store = PostgresIdempotencyStore.create(database.pool());
    }

    @AfterAll
    static void stop() {
        store.close();
        database.close();
    }

    private static OwnerToken claimNew(ScopeKey key, Fingerprint fp, Duration lease) {
        return ownerOf(store.claim(key, fp, lease, RETENTION));
    }

    @Test
    void oneStatementTellsClaimedTakeoverInFlightAndFinishedApart() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        assertThat(store.claim(key, fp, Duration.ofMillis(200), RETENTION))
                .isInstanceOfSatisfying(
                        ClaimOutcome.Claimed.class,
                        c -> assertThat(c.takeover()).isFalse());
        assertThat(store.claim(key, fp, LONG, RETENTION)).isInstanceOf(ClaimOutcome.InFlight.class);

        ClaimOutcome.Claimed takeover = awaitTakeover(key, fp);
        assertThat(takeover.takeover()).isTrue();
        assertThat(store.complete(key, takeover.owner(), RecordStatus.COMPLETED, response(201, "{}")))
                .isTrue();
        assertThat(store.claim(key, fp, LONG, RETENTION)).isInstanceOf(ClaimOutcome.Finished.class);
        assertThat(column(key, "takeovers")).isEqualTo("1");
    }

    @Test
    void bodyAndHeadersRoundTripExactly() {
        ScopeKey key = randomKey();
        OwnerToken owner = claimNew(key, randomFingerprint(), LONG);
        byte[] body = new byte[1 << 20];
        ThreadLocalRandom.current().nextBytes(body);
        for (int i = 0; i < 256; i++) {
            body[i] = (byte) i; // every byte value, NUL and invalid UTF-8 included
        }
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("x-zeta", List.of("1"));
        headers.put("content-type", List.of("application/json; charset=utf-8"));
        headers.put("x-multi", List.of("a", "b, c", "", "ünïcødé \"quoted\" {braces}"));
        headers.put("x-alpha", List.of("NULL"));
        StoredResponse response = new StoredResponse(201, headers, body);

        assertThat(store.complete(key, owner, RecordStatus.COMPLETED, response)).isTrue();

        StoredResponse replayed = store.find(key).orElseThrow().response();
        assertThat(replayed).isEqualTo(response);
        assertThat(replayed.body()).isEqualTo(body);
        assertThat(replayed.headers().keySet()).containsExactly("x-zeta", "content-type", "x-multi", "x-alpha");
        assertThat(replayed.headers().get("x-multi")).containsExactly("a", "b, c", "", "ünïcødé \"quoted\" {braces}");
    }

    @Test
    void aStaleOwnerCannotOverwriteTheNewOwnersResult() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken stale = claimNew(key, fp, Duration.ofMillis(100));
        OwnerToken current = awaitTakeover(key, fp).owner();
        StoredResponse good = response(201, "{\"owner\":\"current\"}");
        assertThat(store.complete(key, current, RecordStatus.COMPLETED, good)).isTrue();

        assertThat(store.complete(key, stale, RecordStatus.FAILED, response(500, "{\"owner\":\"stale\"}")))
                .isFalse();
        assertThat(store.release(key, stale)).isFalse();
        assertThat(store.renew(key, stale, LONG)).isFalse();
        IdempotencyRecord record = store.find(key).orElseThrow();
        assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(record.response()).isEqualTo(good);
        assertThat(record.owner()).isEqualTo(current);
    }

    @Test
    void completionKeepsTheRecordForItsRetentionFromCompletion() throws Exception {
        ScopeKey key = randomKey();
        OwnerToken owner = claimNew(key, randomFingerprint(), LONG);
        IdempotencyRecord claimed = store.find(key).orElseThrow();
        assertThat(store.complete(key, owner, RecordStatus.COMPLETED, response(200, "{}")))
                .isTrue();
        IdempotencyRecord done = store.find(key).orElseThrow();
        assertThat(done.leaseExpiresAt()).isNull();
        assertThat(done.expiresAt()).isAfter(claimed.expiresAt());
        try (Connection c = database.direct().getConnection();
                PreparedStatement s = c.prepareStatement(
                        "SELECT expires_at - updated_at = retention FROM idempotency_records WHERE scope_key = ?")) {
            s.setString(1, key.hash());
            try (ResultSet row = s.executeQuery()) {
                assertThat(row.next()).isTrue();
                assertThat(row.getBoolean(1)).isTrue();
            }
        }
    }

    @Test
    void racingClaimsOfFreshKeysMakeExactlyOneOwnerEach() throws Exception {
        int threads = 12;
        int keys = 60;
        List<ScopeKey> scopeKeys = new ArrayList<>();
        for (int i = 0; i < keys; i++) {
            scopeKeys.add(randomKey());
        }
        Fingerprint fp = randomFingerprint();
        long retriesBefore = store.claimRetries();
        int[][] claimed = race(threads, scopeKeys, key -> store.claim(key, fp, LONG, RETENTION));
        for (int i = 0; i < keys; i++) {
            assertThat(claimed[i][0]).as("owners of key %d", i).isEqualTo(1);
            assertThat(claimed[i][1]).as("takeovers of key %d", i).isZero();
            assertThat(claimed[i][2]).as("in flight for key %d", i).isEqualTo(threads - 1);
        }
        // the window this guards: a conflicting row committed after the statement's snapshot
        System.out.printf(
                "claim statements run again after a row newer than their snapshot: %d%n",
                store.claimRetries() - retriesBefore);
    }

    @Test
    void racingTakeoversOfAnExpiredLeaseMakeExactlyOneNewOwner() throws Exception {
        int threads = 12;
        int keys = 30;
        Fingerprint fp = randomFingerprint();
        List<ScopeKey> scopeKeys = new ArrayList<>();
        for (int i = 0; i < keys; i++) {
            ScopeKey key = randomKey();
            claimNew(key, fp, Duration.ofMillis(1));
            scopeKeys.add(key);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            java.time.Instant now = dbNow();
            return scopeKeys.stream()
                    .allMatch(k -> !store.find(k).orElseThrow().leaseExpiresAt().isAfter(now));
        });
        int[][] claimed = race(threads, scopeKeys, key -> store.claim(key, fp, LONG, RETENTION));
        for (int i = 0; i < keys; i++) {
            assertThat(claimed[i][1]).as("takeovers of key %d", i).isEqualTo(1);
            assertThat(claimed[i][0]).as("fresh owners of key %d", i).isZero();
            assertThat(claimed[i][2]).as("in flight for key %d", i).isEqualTo(threads - 1);
        }
    }

    @Test
    void claimsRacingACompletionSeeInFlightOrFinishedNeverAnError() throws Exception {
        Fingerprint fp = randomFingerprint();
        for (int round = 0; round < 20; round++) {
            ScopeKey key = randomKey();
            OwnerToken owner = claimNew(key, fp, LONG);
            CyclicBarrier barrier = new CyclicBarrier(5);
            ExecutorService pool = Executors.newFixedThreadPool(5);
            try {
                List<Future<ClaimOutcome>> claims = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    claims.add(pool.submit(() -> {
                        barrier.await();
                        return store.claim(key, fp, LONG, RETENTION);
                    }));
                }
                Future<Boolean> completed = pool.submit(() -> {
                    barrier.await();
                    return store.complete(key, owner, RecordStatus.COMPLETED, response(201, "{}"));
                });
                assertThat(completed.get(10, TimeUnit.SECONDS)).isTrue();
                for (Future<ClaimOutcome> claim : claims) {
                    ClaimOutcome outcome = claim.get(10, TimeUnit.SECONDS);
                    assertThat(outcome).isInstanceOfAny(ClaimOutcome.InFlight.class, ClaimOutcome.Finished.class);
                    assertThat(outcome.record().owner()).isEqualTo(owner);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void aClaimBlockedByARowLockFailsClosedAfterTheStatementTimeout() throws Exception {
        PostgresStoreConfig config = PostgresStoreConfig.custom()
                .statementTimeout(Duration.ofSeconds(1))
                .build();
        try (PostgresIdempotencyStore impatient = PostgresIdempotencyStore.create(database.pool(), config);
                Connection tx = database.direct().getConnection()) {
            ScopeKey key = randomKey();
            Fingerprint fp = randomFingerprint();
            tx.setAutoCommit(false);
            OwnerToken owner = ownerOf(impatient.claim(tx, key, fp, LONG, RETENTION));
            // the caller's transaction holds the new row; another claim waits for it, then gives up
            long start = System.nanoTime();
            assertThatThrownBy(() -> impatient.claim(key, fp, LONG, RETENTION))
                    .isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("57014");
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .isBetween(Duration.ofMillis(900), Duration.ofSeconds(4));
            tx.commit();
            assertThat(impatient.claim(key, fp, LONG, RETENTION))
                    .isInstanceOfSatisfying(
                            ClaimOutcome.InFlight.class,
                            o -> assertThat(o.record().owner()).isEqualTo(owner));
        }
    }

    @Test
    void theFirstStatementFollowsTheMixOfKeysAndEveryKindOfKeyIsClaimedRightWhicheverGoesFirst() throws Exception {
        try (PostgresIdempotencyStore adaptive = PostgresIdempotencyStore.create(database.pool())) {
            Fingerprint fp = randomFingerprint();
            assertThat(adaptive.claimsFirst())
                    .as("a new store sends the one-row claim")
                    .isEqualTo("claim");
            ScopeKey finished = randomKey();
            OwnerToken owner = ownerOf(adaptive.claim(finished, fp, LONG, RETENTION));
            assertThat(adaptive.complete(finished, owner, RecordStatus.COMPLETED, response(201, "{\"id\":1}")))
                    .isTrue();
            ScopeKey inFlight = randomKey();
            ownerOf(adaptive.claim(inFlight, fp, LONG, RETENTION));
            ScopeKey expired = randomKey();
            OwnerToken shortLived = ownerOf(adaptive.claim(expired, fp, LONG, Duration.ofMillis(300)));
            assertThat(adaptive.complete(expired, shortLived, RecordStatus.COMPLETED, response(201, "{}")))
                    .isTrue();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> adaptive.find(expired).isEmpty());

            // the mix moves the first statement
            claimUntil(adaptive, "insert", () -> adaptive.claim(randomKey(), fp, LONG, RETENTION));
            claimUntil(adaptive, "claim", () -> adaptive.claim(finished, fp, LONG, RETENTION));
            claimUntil(adaptive, "read", () -> adaptive.claim(finished, fp, LONG, RETENTION));
            claimUntil(adaptive, "claim", () -> adaptive.claim(randomKey(), fp, LONG, RETENTION));

            for (String first : List.of("insert", "read", "claim")) {
                // a fresh key: claimed with the database's own times
                ScopeKey key = randomKey();
                adaptive.claimFirst(first);
                ClaimOutcome.Claimed claimed = (ClaimOutcome.Claimed) adaptive.claim(key, fp, LONG, RETENTION);
                assertThat(claimed.takeover()).isFalse();
                assertThat(adaptive.find(key)).get().satisfies(stored -> {
                    assertThat(stored.owner()).isEqualTo(claimed.owner());
                    assertThat(stored.fingerprint()).isEqualTo(fp);
                    assertThat(stored.createdAt())
                            .as(first)
                            .isEqualTo(claimed.record().createdAt());
                    assertThat(stored.leaseExpiresAt())
                            .isEqualTo(claimed.record().leaseExpiresAt());
                    assertThat(stored.expiresAt()).isEqualTo(claimed.record().expiresAt());
                });
                assertThat(column(key, "purge_after")).isEqualTo(column(key, "expires_at"));
                adaptive.claimFirst(first);
                assertThat(adaptive.claim(key, fp, LONG, RETENTION))
                        .as(first)
                        .isInstanceOf(ClaimOutcome.InFlight.class);
                // a finished key: its answer; a key in flight: in flight
                adaptive.claimFirst(first);
                assertThat(adaptive.claim(finished, fp, LONG, RETENTION))
                        .as(first)
                        .isInstanceOfSatisfying(ClaimOutcome.Finished.class, f -> {
                            assertThat(new String(f.record().response().body(), StandardCharsets.UTF_8))
                                    .isEqualTo("{\"id\":1}");
                            assertThat(f.record().owner()).isEqualTo(owner);
                            assertThat(f.record().fingerprint()).isEqualTo(fp);
                            assertThat(f.record().leaseExpiresAt()).isNull();
                        });
                adaptive.claimFirst(first);
                assertThat(adaptive.claim(inFlight, fp, LONG, RETENTION))
                        .as(first)
                        .isInstanceOf(ClaimOutcome.InFlight.class);
                // an expired record is replaced
                adaptive.claimFirst(first);
                ClaimOutcome replaced = adaptive.claim(expired, fp, LONG, Duration.ofMillis(300));
                assertThat(replaced)
                        .as(first)
                        .isInstanceOfSatisfying(
                                ClaimOutcome.Claimed.class,
                                c -> assertThat(c.takeover()).isFalse());
                assertThat(adaptive.complete(expired, ownerOf(replaced), RecordStatus.COMPLETED, response(201, "{}")))
                        .isTrue();
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> adaptive.find(expired).isEmpty());
            }
        }
    }

    @Test
    void aReplayReadFirstAnswersFromThePackedColumnWhatTheRecordsColumnsHold() throws Exception {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("x-zeta", List.of("1"));
        headers.put("content-type", List.of("application/json; charset=utf-8"));
        headers.put("x-multi", List.of("a", "b, c", "", "ünïcødé \"quoted\" {braces} 😀"));
        byte[] large = new byte[1 << 20];
        ThreadLocalRandom.current().nextBytes(large);
        List<StoredResponse> responses = List.of(
                new StoredResponse(201, headers, "{\"id\":7}".getBytes(StandardCharsets.UTF_8)),
                new StoredResponse(500, Map.of(), new byte[0]),
                new StoredResponse(200, Map.of("x-a", List.of("b")), large));
        for (RecordStatus outcome : List.of(RecordStatus.COMPLETED, RecordStatus.FAILED)) {
            for (StoredResponse response : responses) {
                ScopeKey key = randomKey();
                Fingerprint fp = randomFingerprint();
                OwnerToken owner = claimNew(key, fp, LONG);
                assertThat(store.complete(key, owner, outcome, response)).isTrue();
                assertThat(column(key, "replay"))
                        .as("packed by the row trigger")
                        .isNotNull();
                IdempotencyRecord columns = store.find(key).orElseThrow();
                assertThat(columns.owner()).isEqualTo(owner);

                store.claimFirst("read");
                assertThat(store.claim(key, fp, LONG, RETENTION))
                        .isInstanceOfSatisfying(ClaimOutcome.Finished.class, f -> {
                            assertThat(f.record()).isEqualTo(columns);
                            assertThat(f.record().response().headers()).containsExactlyEntriesOf(response.headers());
                        });
            }
        }
    }

    @Test
    void theRowTriggerKeepsThePackedColumnWithTheRecordAndTheStoreReadsTheColumnsWithoutIt() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, LONG);
        assertThat(column(key, "replay")).as("a record in flight").isNull();
        assertThat(store.complete(key, owner, RecordStatus.COMPLETED, response(201, "{\"id\":1}")))
                .isTrue();
        String packed = column(key, "replay");
        IdempotencyRecord columns = store.find(key).orElseThrow();

        // written by hand, it is written again from the record
        execute("UPDATE idempotency_records SET replay = '\\x01' WHERE scope_key = '" + key.hash() + "'");
        assertThat(column(key, "replay")).isEqualTo(packed);
        // a later expiry is packed too
        execute("UPDATE idempotency_records SET expires_at = expires_at + interval '1 hour' WHERE scope_key = '"
                + key.hash() + "'");
        assertThat(column(key, "replay")).isNotEqualTo(packed);
        IdempotencyRecord later = store.find(key).orElseThrow();
        assertThat(later.expiresAt()).isEqualTo(columns.expiresAt().plus(Duration.ofHours(1)));
        store.claimFirst("read");
        assertThat(store.claim(key, fp, LONG, RETENTION))
                .isInstanceOfSatisfying(
                        ClaimOutcome.Finished.class, f -> assertThat(f.record()).isEqualTo(later));

        // a session in another client encoding would pack its text in that encoding: it packs nothing, and the
        // store reads the record's columns
        PGSimpleDataSource latin1 = new PGSimpleDataSource();
        latin1.setURL(database.direct().unwrap(PGSimpleDataSource.class).getURL());
        latin1.setAllowEncodingChanges(true);
        try (Connection c = latin1.getConnection();
                Statement s = c.createStatement()) {
            s.execute("SET client_encoding TO 'LATIN1'");
            s.execute("UPDATE idempotency_records SET expires_at = expires_at WHERE scope_key = '" + key.hash() + "'");
        }
        assertThat(column(key, "replay")).isNull();
        store.claimFirst("read");
        assertThat(store.claim(key, fp, LONG, RETENTION))
                .isInstanceOfSatisfying(
                        ClaimOutcome.Finished.class, f -> assertThat(f.record()).isEqualTo(later));

        // an expired record that a claim replaces is in flight again, without a replay
        ScopeKey expiring = randomKey();
        OwnerToken first = ownerOf(store.claim(expiring, fp, LONG, Duration.ofMillis(300)));
        assertThat(store.complete(expiring, first, RecordStatus.COMPLETED, response(201, "{}")))
                .isTrue();
        assertThat(column(expiring, "replay")).isNotNull();
        await().atMost(Duration.ofSeconds(10)).until(() -> store.find(expiring).isEmpty());
        store.claimFirst("read");
        assertThat(store.claim(expiring, fp, LONG, RETENTION)).isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(column(expiring, "status")).isEqualTo("PROCESSING");
        assertThat(column(expiring, "replay")).isNull();
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = database.direct().getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** Claims until the store sends {@code first} first (at most a hundred claims). */
    private static void claimUntil(PostgresIdempotencyStore store, String first, Runnable claim) {
        for (int i = 0; i < 100 && !store.claimsFirst().equals(first); i++) {
            claim.run();
        }
        assertThat(store.claimsFirst()).isEqualTo(first);
    }

    @Test
    void aReplayTakesNoRowLockAndNoTransactionId() throws Exception {
        PostgresStoreConfig config = PostgresStoreConfig.custom()
                .statementTimeout(Duration.ofSeconds(1))
                .build();
        try (PostgresIdempotencyStore impatient = PostgresIdempotencyStore.create(database.pool(), config);
                Connection locker = database.direct().getConnection();
                Connection reader = database.direct().getConnection()) {
            ScopeKey key = randomKey();
            Fingerprint fp = randomFingerprint();
            OwnerToken owner = claimNew(key, fp, LONG);
            assertThat(store.complete(key, owner, RecordStatus.COMPLETED, response(201, "{}")))
                    .isTrue();

            // another transaction holds the finished row's lock: a replay does not wait for it
            locker.setAutoCommit(false);
            try (PreparedStatement lock =
                    locker.prepareStatement("SELECT 1 FROM idempotency_records WHERE scope_key = ? FOR UPDATE")) {
                lock.setString(1, key.hash());
                lock.executeQuery().close();
            }
            assertThat(impatient.claim(key, fp, LONG, RETENTION)).isInstanceOf(ClaimOutcome.Finished.class);
            assertThat(impatient.claim(key, randomFingerprint(), LONG, RETENTION))
                    .as("a mismatch reads the record the same way")
                    .isInstanceOf(ClaimOutcome.Finished.class);
            locker.rollback();

            // inside a transaction, the replay assigned no transaction id: it wrote nothing, not even a lock
            reader.setAutoCommit(false);
            assertThat(impatient.claim(reader, key, fp, LONG, RETENTION)).isInstanceOf(ClaimOutcome.Finished.class);
            try (PreparedStatement xid = reader.prepareStatement("SELECT txid_current_if_assigned()");
                    ResultSet row = xid.executeQuery()) {
                assertThat(row.next()).isTrue();
                assertThat(row.getObject(1))
                        .as("transaction id of the replay's transaction")
                        .isNull();
            }
            reader.rollback();
        }
    }

    @Test
    void aCompletionNotifiesOnlyWhenSomebodyWaitsForTheRecord() throws Exception {
        try (Connection listening = database.direct().getConnection()) {
            listening.setAutoCommit(true);
            try (var listen = listening.createStatement()) {
                listen.execute("LISTEN " + store.config().notificationChannel());
            }
            ScopeKey completed = randomKey();
            ScopeKey released = randomKey();
            ScopeKey watched = randomKey();
            assertThat(store.complete(
                            completed,
                            claimNew(completed, randomFingerprint(), LONG),
                            RecordStatus.COMPLETED,
                            response(201, "{}")))
                    .isTrue();
            assertThat(store.release(released, claimNew(released, randomFingerprint(), LONG)))
                    .isTrue();
            OwnerToken owner = claimNew(watched, randomFingerprint(), LONG);
            assertThat(column(watched, "waiters")).isEqualTo("f");
            try (ChangeSubscription subscription = store.subscribe(watched)) {
                assertThat(column(watched, "waiters"))
                        .as("marked before subscribe returns")
                        .isEqualTo("t");
                assertThat(store.complete(watched, owner, RecordStatus.COMPLETED, response(201, "{}")))
                        .isTrue();
                assertThat(subscription.await(Duration.ofSeconds(5))).isTrue();
            }
            // notifications arrive in commit order: the first one of these keys is the watched record's
            // (other test runs may notify on the shared channel: their keys are not ours)
            PGConnection pg = listening.unwrap(PGConnection.class);
            List<String> ours = List.of(completed.hash(), released.hash(), watched.hash());
            String first = await().atMost(Duration.ofSeconds(10))
                    .until(
                            () -> {
                                PGNotification[] notifications = pg.getNotifications(100);
                                if (notifications != null) {
                                    for (PGNotification notification : notifications) {
                                        if (ours.contains(notification.getParameter())) {
                                            return notification.getParameter();
                                        }
                                    }
                                }
                                return null;
                            },
                            java.util.Objects::nonNull);
            assertThat(first)
                    .as("no notification for the records nobody waited for")
                    .isEqualTo(watched.hash());
        }
    }

    @Test
    void aCompletionIsAHotUpdateThatWritesNoIndex() throws Exception {
        int keys = 200;
        try (TestDatabase own = TestDatabase.create("idem_hot", 2)) {
            try (PostgresIdempotencyStore hot = PostgresIdempotencyStore.create(own.pool())) {
                for (int i = 0; i < keys; i++) {
                    ScopeKey key = randomKey();
                    OwnerToken owner = ownerOf(hot.claim(key, randomFingerprint(), LONG, RETENTION));
                    assertThat(hot.complete(
                                    key,
                                    owner,
                                    i % 2 == 0 ? RecordStatus.COMPLETED : RecordStatus.FAILED,
                                    response(
                                            201,
                                            "{\"id\":\"" + key.hash() + "\",\"amount\":1000,\"currency\":\"EUR\"}")))
                            .isTrue();
                }
            }
            own.close(); // a backend reports its table statistics at the latest when it exits
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(updates(own)[0]).isEqualTo(keys));
            assertThat(updates(own)[1])
                    .as("HOT updates among the %d completions", keys)
                    .isEqualTo(keys);
        }
    }

    /** The table's updates and HOT updates, as the statistics have them. */
    private static long[] updates(TestDatabase database) throws SQLException {
        try (Connection c = database.direct().getConnection();
                Statement s = c.createStatement();
                ResultSet row = s.executeQuery("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
                        + "WHERE relid = 'idempotency_records'::regclass")) {
            assertThat(row.next()).isTrue();
            return new long[] {row.getLong(1), row.getLong(2)};
        }
    }

    @Test
    void purgeDeletesExpiredRowsInBoundedBatches() {
        // a table of its own, so that expired rows of other tests do not count
        PostgresStoreConfig config =
                PostgresStoreConfig.custom().tableName("purge_records").build();
        assertThat(PostgresSchema.migrate(database.pool(), config)).isTrue();
        try (PostgresIdempotencyStore purging = PostgresIdempotencyStore.create(database.pool(), config)) {
            database.execute("""
                    INSERT INTO purge_records (scope_key, status, fingerprint, owner_token, created_at,
                        lease_expires_at, expires_at, retention, updated_at)
                    SELECT md5(i::text) || md5((i + 1)::text), 'PROCESSING', 'sha256-jcs:x', 'o', now() - interval '2 days',
                        now() - interval '2 days', now() - interval '1 day' - i * interval '1 second', interval '1 day', now()
                    FROM generate_series(1, 2500) AS i
                    """);
            List<ScopeKey> live = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                ScopeKey key = randomKey();
                purging.claim(key, randomFingerprint(), LONG, RETENTION);
                live.add(key);
            }

            assertThat(purging.purgeExpired(1000)).isEqualTo(1000);
            assertThat(purging.purgeExpired(1000)).isEqualTo(1000);
            assertThat(purging.purgeExpired(1000)).isEqualTo(500); // short: the loop stops here
            assertThat(purging.purgeExpired(1000)).isZero();
            live.forEach(key -> assertThat(purging.find(key)).isPresent());

            // expiry shortened by hand: the purge finds a record once its purge_after passed too (migration V8:
            // the claim's expiry, a lower bound no statement of the store breaks, but SQL like this one can)
            database.execute("""
                    UPDATE purge_records SET expires_at = now() - interval '1 second'
                    """);
            assertThat(purging.purgeExpired(2))
                    .as("not yet: purge_after is the claim's expiry")
                    .isZero();
            database.execute("""
                    UPDATE purge_records SET purge_after = expires_at
                    """);
            assertThat(purging.purgeAllExpired(2)).isEqualTo(5);
            assertThatThrownBy(() -> purging.purgeExpired(0)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void aCustomTableIsCreatedOnceAndUsed() {
        PostgresStoreConfig config =
                PostgresStoreConfig.custom().tableName("custom_idem").build();
        assertThat(PostgresSchema.migrate(database.pool(), config)).isTrue();
        assertThat(PostgresSchema.migrate(database.pool(), config)).isFalse();
        assertThat(PostgresSchema.migrate(database.pool())).isFalse();
        assertThat(PostgresSchema.script(config))
                .contains("CREATE TABLE IF NOT EXISTS custom_idem (", "custom_idem_expires_at_idx")
                .doesNotContain("idempotency_records");
        assertThat(PostgresSchema.script(PostgresStoreConfig.ofDefaults()))
                .contains("idempotency_records_expires_at_idx");
        try (PostgresIdempotencyStore custom = PostgresIdempotencyStore.create(database.pool(), config)) {
            ScopeKey key = randomKey();
            OwnerToken owner = ownerOf(custom.claim(key, randomFingerprint(), LONG, RETENTION));
            assertThat(custom.complete(key, owner, RecordStatus.COMPLETED, response(200, "{}")))
                    .isTrue();
            assertThat(custom.find(key)).isPresent();
            assertThat(store.find(key)).isEmpty();
        }
    }

    @Test
    void theRecoveryPointIsFencedAndSurvivesATakeover() throws Exception {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken first = claimNew(key, fp, Duration.ofMillis(100));
        try (Connection c = database.pool().getConnection()) {
            assertThat(store.updateRecoveryPoint(c, key, first, "charge_created"))
                    .isTrue();
            assertThat(store.updateRecoveryPoint(c, key, OwnerToken.random(), "forged"))
                    .isFalse();
            assertThat(store.findRecoveryPoint(c, key)).contains("charge_created");
        }
        OwnerToken second = awaitTakeover(key, fp).owner();
        assertThat(store.findRecoveryPoint(key)).contains("charge_created");
        try (Connection c = database.pool().getConnection()) {
            assertThat(store.updateRecoveryPoint(c, key, first, "stale")).isFalse();
            assertThat(store.updateRecoveryPoint(c, key, second, "processor_called"))
                    .isTrue();
        }
        assertThat(store.findRecoveryPoint(key)).contains("processor_called");
        assertThat(store.findRecoveryPoint(randomKey())).isEmpty();
    }

    @Test
    void completeRejectsANonFinalOutcome() {
        ScopeKey key = randomKey();
        OwnerToken owner = claimNew(key, randomFingerprint(), LONG);
        assertThatThrownBy(() -> store.complete(key, owner, RecordStatus.PROCESSING, response(200, "{}")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.claim(key, randomFingerprint(), Duration.ZERO, RETENTION))
                .isInstanceOf(IllegalArgumentException.class);
    }

    // ------------------------------------------------------------------------------- helpers

    /** Claims until the lease has run out and the claim takes over. */
    static ClaimOutcome.Claimed awaitTakeover(ScopeKey key, Fingerprint fp) {
        ClaimOutcome outcome = await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> store.claim(key, fp, LONG, RETENTION), o -> o instanceof ClaimOutcome.Claimed);
        return (ClaimOutcome.Claimed) outcome;
    }

    /** {@code threads} threads claim every key at once (a barrier per key); counts [claimed, takeover, in flight]. */
    private static int[][] race(
            int threads, List<ScopeKey> keys, java.util.function.Function<ScopeKey, ClaimOutcome> claim)
            throws Exception {
        int[][] counts = new int[keys.size()][3];
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int i = 0; i < keys.size(); i++) {
                ScopeKey key = keys.get(i);
                CyclicBarrier barrier = new CyclicBarrier(threads);
                List<Future<ClaimOutcome>> outcomes = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    outcomes.add(pool.submit(() -> {
                        barrier.await();
                        return claim.apply(key);
                    }));
                }
                for (Future<ClaimOutcome> future : outcomes) {
                    switch (future.get(20, TimeUnit.SECONDS)) {
                        case ClaimOutcome.Claimed c -> counts[i][c.takeover() ? 1 : 0]++;
                        case ClaimOutcome.InFlight f -> counts[i][2]++;
                        case ClaimOutcome.Finished f -> throw new AssertionError("nobody finished " + key);
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return counts;
    }

    private static java.time.Instant dbNow() throws Exception {
        try (Connection c = database.direct().getConnection();
                PreparedStatement s = c.prepareStatement("SELECT statement_timestamp()");
                ResultSet row = s.executeQuery()) {
            row.next();
            return row.getObject(1, java.time.OffsetDateTime.class).toInstant();
        }
    }

    private static String column(ScopeKey key, String column) throws Exception {
        try (Connection c = database.direct().getConnection();
                PreparedStatement s = c.prepareStatement("SELECT * FROM idempotency_records WHERE scope_key = ?")) {
            s.setString(1, key.hash());
            try (ResultSet row = s.executeQuery()) {
                assertThat(row.next()).isTrue();
                return row.getString(column);
            }
        }
    }
}
