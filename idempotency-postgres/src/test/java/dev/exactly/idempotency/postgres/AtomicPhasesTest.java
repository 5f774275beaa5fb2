package dev.exactly.idempotency.postgres;

import static dev.exactly.idempotency.postgres.TestDatabase.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoreUnavailableException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The transactional API against a real PostgreSQL: the claim and the business writes commit or roll back
 * together, only one of racing transactions owns a key, a stale owner cannot commit, recovery resumes
 * from the last committed checkpoint and dead-letters after the last attempt. The business table here is
 * a "shipments" table, written in the same transactions.
 */
class AtomicPhasesTest {
    private static final IdempotencyPolicy LONG = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30))
            .retention(Duration.ofMinutes(10))
            .build();
    private static final IdempotencyPolicy SHORT = IdempotencyPolicy.custom()
            .lease(Duration.ofMillis(300))
            .retention(Duration.ofMinutes(10))
            .keepAlive(KeepAlive.disabled())
            .build();

    private static TestDatabase database;
    private static PostgresIdempotencyStore store;
    private static AtomicPhases phases;

    @BeforeAll
    static void start() {
        database = TestDatabase.create("idem_phases", 24);
        database.execute("CREATE TABLE shipments (id text PRIMARY KEY, order_id text NOT NULL, label text)");
        store = PostgresIdempotencyStore.create(database.pool());
        phases = AtomicPhases.builder(store)
                .recoveryPolicy(RecoveryPolicy.custom()
                        .maxAttempts(3)
                        .firstDelay(Duration.ofMillis(50))
                        .maxDelay(Duration.ofMillis(100))
                        .parallelism(4)
                        .interval(Duration.ofMillis(50))
                        .build())
                .build();
    }

    @AfterAll
    static void stop() {
        store.close();
        database.close();
    }

    private static IdempotencyRequest request(String order, IdempotencyPolicy policy) {
        return IdempotencyRequest.of(
                new Scope("acme", "POST", "/v1/shipments", new IdempotencyKey("ship-" + order)),
                new Fingerprint("sha256-jcs", order),
                policy);
    }

    private static String unique() {
        return UUID.randomUUID().toString();
    }

    @Test
    void racingTransactionsHaveOneOwnerAndTheOthersReplayItsAnswer() throws Exception {
        String order = unique();
        int racers = 12;
        CyclicBarrier start = new CyclicBarrier(racers);
        AtomicInteger owners = new AtomicInteger();
        List<String> others = new CopyOnWriteArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(racers)) {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < racers; i++) {
                done.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    try (Connection c = tx()) {
                        PhaseStart begun;
                        try {
                            begun = phases.begin(c, request(order, LONG));
                        } catch (StoreUnavailableException conflict) {
                            c.rollback(); // another transaction committed the key after this one's snapshot
                            others.add("conflict");
                            return null;
                        }
                        if (begun instanceof PhaseStart.Owned owned) {
                            owners.incrementAndGet();
                            insertShipment(c, "shp-" + order, order);
                            assertThat(phases.finish(c, owned.phase(), RecordStatus.COMPLETED, response(201, order)))
                                    .isTrue();
                        } else {
                            others.add(begun.getClass().getSimpleName());
                        }
                        c.commit();
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        }
        assertThat(owners).hasValue(1);
        assertThat(others)
                .hasSize(racers - 1)
                .allMatch(s -> s.equals("InFlight") || s.equals("Replay") || s.equals("conflict"));
        assertThat(shipments(order)).isEqualTo(1);
        try (Connection c = tx()) {
            PhaseStart late = phases.begin(c, request(order, LONG));
            assertThat(late)
                    .isInstanceOfSatisfying(
                            PhaseStart.Replay.class,
                            r -> assertThat(new String(r.response().body(), StandardCharsets.UTF_8))
                                    .isEqualTo(order));
            c.rollback();
        }
    }

    @Test
    void aRolledBackBeginLeavesNoTrace() throws Exception {
        String order = unique();
        try (Connection c = tx()) {
            PhaseStart begun = phases.begin(c, request(order, LONG));
            Phase phase = ((PhaseStart.Owned) begun).phase();
            insertShipment(c, "shp-" + order, order);
            assertThat(phases.checkpoint(c, phase, Checkpoint.of("shipment_created")))
                    .isTrue();
            c.rollback();
        }
        assertThat(phases.find(request(order, LONG).key())).isEmpty();
        assertThat(shipments(order)).isZero();
        try (Connection c = tx()) {
            PhaseStart again = phases.begin(c, request(order, LONG));
            assertThat(again).isInstanceOfSatisfying(PhaseStart.Owned.class, o -> {
                assertThat(o.phase().takeover()).isFalse();
                assertThat(o.phase().checkpoint()).isNull();
            });
            c.rollback();
        }
    }

    @Test
    void aStaleOwnerCannotCommitAndItsBusinessWritesRollBack() throws Exception {
        String order = unique();
        Phase first;
        try (Connection c = tx()) {
            first = ((PhaseStart.Owned) phases.begin(c, request(order, SHORT))).phase();
            insertShipment(c, "shp-" + order, order);
            phases.checkpoint(c, first, new Checkpoint("shipment_created", "shp-1".getBytes(StandardCharsets.UTF_8)));
            c.commit();
        }
        // the first owner stalls past its lease; a retry takes over and sees what it committed
        Phase second = ((PhaseStart.Owned) awaitOwned(order, LONG)).phase();
        assertThat(second.takeover()).isTrue();
        assertThat(second.checkpoint())
                .isEqualTo(new Checkpoint("shipment_created", "shp-1".getBytes(StandardCharsets.UTF_8)));

        // the first owner wakes up and tries to finish with a business write: refused, all of it rolls back
        try (Connection c = tx()) {
            setLabel(c, "shp-" + order, "STALE");
            assertThat(phases.finish(c, first, RecordStatus.COMPLETED, response(201, "stale")))
                    .isFalse();
            assertThat(phases.checkpoint(c, first, Checkpoint.of("late"))).isFalse();
            assertThat(phases.retryLater(c, first, "late")).isInstanceOf(Retry.Lost.class);
            c.rollback();
        }
        try (Connection c = tx()) {
            setLabel(c, "shp-" + order, "LBL-2");
            assertThat(phases.finish(c, second, RecordStatus.COMPLETED, response(201, "ok")))
                    .isTrue();
            c.commit();
        }
        assertThat(label("shp-" + order)).isEqualTo("LBL-2");
        assertThat(phases.find(second.key()).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
    }

    @Test
    void writesSentWithTheCallersStatementsInOneRoundTripAreFencedLikeTheirMethods() throws Exception {
        String order = unique();
        Phase first;
        try (Connection c = tx()) {
            first = ((PhaseStart.Owned) phases.begin(c, request(order, SHORT))).phase();
            // the business insert, the checkpoint and the commit in one prepared statement (one Sync)
            PhaseWrite checkpoint = phases.checkpointing(first, new Checkpoint("shipment_created", new byte[] {7}));
            try (PreparedStatement s = c.prepareStatement(
                    "INSERT INTO shipments (id, order_id) VALUES (?, ?);\n" + checkpoint.sql() + ";\nCOMMIT")) {
                s.setString(1, "shp-" + order);
                s.setString(2, order);
                assertThat(checkpoint.bind(s, 3)).isEqualTo(7);
                s.execute();
                assertThat(s.getUpdateCount()).isEqualTo(1);
                s.getMoreResults();
                assertThat(checkpoint.applied(s)).isTrue();
            }
            c.commit(); // nothing left to commit
        }
        assertThat(phases.find(first.key()).orElseThrow().checkpoint())
                .isEqualTo(new Checkpoint("shipment_created", new byte[] {7}));
        Phase second = ((PhaseStart.Owned) awaitOwned(order, LONG)).phase();

        // the stale owner's finish, sent with its business write: it did not apply, so the caller rolls back
        try (Connection c = tx()) {
            assertThat(finishWithLabel(c, first, "STALE")).isFalse();
            c.rollback();
        }
        try (Connection c = tx()) {
            assertThat(finishWithLabel(c, second, "LBL-2")).isTrue();
            c.commit();
        }
        assertThat(label("shp-" + order)).isEqualTo("LBL-2");
        var finished = phases.find(second.key()).orElseThrow();
        assertThat(finished.status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(finished.record().response().body())
                .isEqualTo(response(201, "LBL-2").body());
        assertThatThrownBy(() -> phases.finishing(second, RecordStatus.PROCESSING, response(201, "x")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aNewPhaseIsClaimedWithItsFirstCheckpointInTheCallersRoundTripAndAnyRecordOfTheKeyRefusesIt() throws Exception {
        String order = unique();
        PhaseClaim claim = phases.beginningNew(request(order, LONG), Checkpoint.of("shipment_created"));
        try (Connection c = tx()) {
            try (PreparedStatement s = c.prepareStatement(
                    claim.sql() + ";\nINSERT INTO shipments (id, order_id) VALUES (?, ?);\nCOMMIT")) {
                int next = claim.bind(s, 1);
                s.setString(next, "shp-" + order);
                s.setString(next + 1, order);
                s.execute();
                assertThat(claim.applied(s)).isTrue();
            }
            c.commit(); // nothing left to commit
        }
        Phase phase = claim.phase();
        assertThat(phase.takeover()).isFalse();
        assertThat(phase.resumed()).isFalse();
        PhaseRecord record = phases.find(phase.key()).orElseThrow();
        assertThat(record.status()).isEqualTo(RecordStatus.PROCESSING);
        assertThat(record.checkpoint()).isEqualTo(Checkpoint.of("shipment_created"));
        assertThat(record.record().owner()).isEqualTo(phase.owner());
        assertThat(record.record().expiresAt())
                .as("a phase in progress never expires")
                .isAfter(Instant.now().plus(Duration.ofDays(365)));
        // the key has a record now: a second new claim fails, and its transaction writes nothing
        PhaseClaim again = phases.beginningNew(request(order, LONG), Checkpoint.of("shipment_created"));
        try (Connection c = tx()) {
            try (PreparedStatement s =
                    c.prepareStatement("INSERT INTO shipments (id, order_id) VALUES (?, ?);\n" + again.sql())) {
                s.setString(1, "shp-again-" + order);
                s.setString(2, order);
                again.bind(s, 3);
                assertThatThrownBy(s::execute)
                        .isInstanceOfSatisfying(
                                SQLException.class,
                                e -> assertThat(e.getSQLState()).isEqualTo("23505"));
            }
            c.rollback();
        }
        assertThat(shipments(order)).isEqualTo(1);
        // the owner finishes as after begin
        try (Connection c = tx()) {
            assertThat(phases.finish(c, phase, RecordStatus.COMPLETED, response(201, order)))
                    .isTrue();
            c.commit();
        }
        assertThat(phases.find(phase.key()).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
    }

    /** The phase's finish and the shipment's label in one round trip; whether the finish applied. */
    private static boolean finishWithLabel(Connection c, Phase phase, String label) throws SQLException {
        PhaseWrite finish = phases.finishing(phase, RecordStatus.COMPLETED, response(201, label));
        try (PreparedStatement s =
                c.prepareStatement(finish.sql() + ";\nUPDATE shipments SET label = ? WHERE order_id = ?")) {
            int next = finish.bind(s, 1);
            s.setString(next, label);
            s.setString(next + 1, phase.fingerprint().value());
            s.execute();
            return finish.applied(s);
        }
    }

    @Test
    void recoveryResumesFromTheLastCommittedCheckpoint() throws Exception {
        String order = unique();
        try (Connection c = tx()) {
            Phase phase = ((PhaseStart.Owned) phases.begin(c, request(order, SHORT))).phase();
            insertShipment(c, "shp-" + order, order);
            phases.checkpoint(c, phase, Checkpoint.of("shipment_created"));
            c.commit();
        }
        try (Connection c = tx()) {
            // a second step committed, then a third that did not (the owner "crashed" before its commit)
            Phase phase = ((PhaseStart.Owned) awaitOwned(order)).phase();
            phases.checkpoint(c, phase, new Checkpoint("label_booked", "LBL-7".getBytes(StandardCharsets.UTF_8)));
            c.commit();
            phases.checkpoint(c, phase, Checkpoint.of("never_committed"));
            c.rollback();
        }
        List<Phase> resumed = new CopyOnWriteArrayList<>();
        PhaseRecovery recovery = phases.recovery(
                phase -> {
                    if (!phase.key().equals(request(order, SHORT).key())) {
                        return; // another test's phase: leave it to its own resumer
                    }
                    resumed.add(phase);
                    try (Connection c = tx()) {
                        setLabel(
                                c, "shp-" + order, new String(phase.checkpoint().state(), StandardCharsets.UTF_8));
                        phases.finish(c, phase, RecordStatus.COMPLETED, response(201, "resumed"));
                        c.commit();
                    }
                },
                LONG);
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    recovery.runOnce();
                    return !resumed.isEmpty();
                });
        assertThat(resumed).hasSize(1);
        assertThat(resumed.getFirst().checkpoint().name()).isEqualTo("label_booked");
        assertThat(resumed.getFirst().takeover()).isTrue();
        assertThat(label("shp-" + order)).isEqualTo("LBL-7");
        assertThat(phases.find(request(order, SHORT).key()).orElseThrow().status())
                .isEqualTo(RecordStatus.COMPLETED);
        assertThat(shipments(order)).isEqualTo(1);
    }

    /** A resumer's Error is a failed attempt like its exception: the phase is not taken over again and again. */
    @ParameterizedTest(name = "the resumer throws an Error: {0}")
    @ValueSource(booleans = {false, true})
    void recoveryDeadLettersAfterTheLastAttemptAndAnOperatorResolvesIt(boolean anError) throws Exception {
        String order = unique();
        try (Connection c = tx()) {
            Phase phase = ((PhaseStart.Owned) phases.begin(c, request(order, SHORT))).phase();
            insertShipment(c, "shp-" + order, order);
            phases.checkpoint(c, phase, Checkpoint.of("shipment_created"));
            c.commit();
        }
        AtomicInteger attempts = new AtomicInteger();
        PhaseRecovery recovery = phases.recovery(
                phase -> {
                    if (phase.key().equals(request(order, SHORT).key())) {
                        attempts.incrementAndGet();
                        if (anError) {
                            throw new NoClassDefFoundError("carrier unreachable: its client does not link");
                        }
                        throw new IllegalStateException("carrier unreachable");
                    }
                },
                SHORT);
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    recovery.runOnce();
                    return phases.find(request(order, SHORT).key())
                            .orElseThrow()
                            .deadLettered();
                });
        assertThat(attempts).hasValue(3);
        PhaseRecord dead = phases.deadLetters(100).stream()
                .filter(r -> r.key().equals(request(order, SHORT).key()))
                .findFirst()
                .orElseThrow();
        assertThat(dead.attempts()).isEqualTo(3);
        assertThat(dead.lastError())
                .contains("carrier unreachable")
                .contains(anError ? "NoClassDefFoundError" : "IllegalStateException");
        assertThat(dead.checkpoint()).isEqualTo(Checkpoint.of("shipment_created"));

        // nobody takes a dead letter over: not recovery, not a client retry
        recovery.runOnce();
        assertThat(attempts).hasValue(3);
        try (Connection c = tx()) {
            assertThat(phases.begin(c, request(order, SHORT))).isInstanceOf(PhaseStart.DeadLettered.class);
            c.rollback();
        }
        // an operator does
        try (Connection c = tx()) {
            Phase operator =
                    phases.takeOver(c, request(order, SHORT).key(), LONG).orElseThrow();
            assertThat(operator.attempts()).isZero();
            assertThat(operator.checkpoint()).isEqualTo(Checkpoint.of("shipment_created"));
            setLabel(c, "shp-" + order, "BY-HAND");
            assertThat(phases.finish(c, operator, RecordStatus.FAILED, response(409, "resolved by hand")))
                    .isTrue();
            c.commit();
        }
        assertThat(phases.deadLetters(100))
                .noneMatch(r -> r.key().equals(request(order, SHORT).key()));
        try (Connection c = tx()) {
            assertThat(phases.begin(c, request(order, SHORT))).isInstanceOf(PhaseStart.Replay.class);
            c.rollback();
        }
    }

    @Test
    void aFailedAttemptHandsThePhaseOverSoItsOwnerCanNoLongerRenewIt() throws Exception {
        String order = unique();
        Phase owner;
        try (Connection c = tx()) {
            owner = ((PhaseStart.Owned) phases.begin(c, request(order, LONG))).phase();
            insertShipment(c, "shp-" + order, order);
            phases.checkpoint(c, owner, Checkpoint.of("shipment_created"));
            c.commit();
        }
        try (Connection c = tx()) {
            assertThat(phases.retryLater(c, owner, "carrier timed out")).isInstanceOf(Retry.Scheduled.class);
            c.commit();
        }
        // a renewal the owner's keep-alive sends after the hand-over cannot stretch the backoff to a lease
        assertThat(store.renew(owner.key(), owner.owner(), Duration.ofSeconds(30)))
                .isFalse();
        try (Connection c = tx()) {
            assertThat(phases.checkpoint(c, owner, Checkpoint.of("late"))).isFalse();
            assertThat(phases.finish(c, owner, RecordStatus.COMPLETED, response(201, "late")))
                    .isFalse();
            c.rollback();
        }
        // after the backoff (at most 100 ms here), a retry takes over under a token of its own
        Phase next = ((PhaseStart.Owned) awaitOwned(order)).phase();
        assertThat(next.owner()).isNotEqualTo(owner.owner());
        assertThat(next.attempts()).isEqualTo(1);
        assertThat(next.checkpoint()).isEqualTo(Checkpoint.of("shipment_created"));
    }

    @Test
    void aRecoveryRoundTakesOverNoMoreThanItsParallelism() throws Exception {
        // many abandoned phases at once, as after an outage: every round takes at most `parallelism` of them
        // (the limit of one statement that picks rows with SKIP LOCKED, however the planner joins it)
        List<String> orders = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String order = unique();
            orders.add(order);
            try (Connection c = tx()) {
                Phase phase = ((PhaseStart.Owned) phases.begin(c, request(order, SHORT))).phase();
                phases.checkpoint(c, phase, Checkpoint.of("shipment_created"));
                c.commit();
            }
        }
        List<dev.exactly.idempotency.ScopeKey> mine =
                orders.stream().map(o -> request(o, SHORT).key()).toList();
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        List<Integer> rounds = new CopyOnWriteArrayList<>();
        AtomicInteger finished = new AtomicInteger();
        PhaseRecovery recovery = phases.recovery(
                phase -> {
                    mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
                    try (Connection c = tx()) {
                        if (mine.contains(phase.key())) {
                            phases.finish(c, phase, RecordStatus.COMPLETED, response(201, "resumed"));
                            finished.incrementAndGet();
                        } else {
                            phases.finish(c, phase, RecordStatus.COMPLETED, response(201, "another test's"));
                        }
                        c.commit();
                    } finally {
                        running.decrementAndGet();
                    }
                },
                LONG);
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    rounds.add(recovery.runOnce());
                    return finished.get() == orders.size();
                });
        assertThat(rounds).allSatisfy(taken -> assertThat(taken).isBetween(0, 4));
        assertThat(mostAtOnce.get()).isLessThanOrEqualTo(4);
    }

    @Test
    void aPhaseInProgressOutlivesItsRetentionAndFinishedOnesExpire() throws Exception {
        String order = unique();
        IdempotencyPolicy briefly = IdempotencyPolicy.custom()
                .lease(Duration.ofMillis(100))
                .retention(Duration.ofMillis(400))
                .keepAlive(KeepAlive.disabled())
                .build();
        try (Connection c = tx()) {
            Phase phase = ((PhaseStart.Owned) phases.begin(c, request(order, briefly))).phase();
            phases.checkpoint(c, phase, Checkpoint.of("started"));
            c.commit();
        }
        await().pollDelay(Duration.ofMillis(600)).atMost(Duration.ofSeconds(5)).until(() -> true);
        store.purgeAllExpired(100);
        PhaseRecord record = phases.find(request(order, briefly).key()).orElseThrow();
        assertThat(record.inProgress()).isTrue();
        assertThat(phases.inProgress(1000)).anyMatch(r -> r.key().equals(record.key()));
    }

    @Test
    void aKeyUsedForAnotherRequestIsRefusedEvenInFlight() throws Exception {
        String order = unique();
        try (Connection c = tx()) {
            phases.begin(c, request(order, LONG));
            c.commit();
        }
        IdempotencyRequest other = IdempotencyRequest.of(
                request(order, LONG).scope(),
                new Fingerprint("sha256-jcs", "other"),
                IdempotencyPolicy.from(LONG)
                        .inFlight(InFlightPolicy.reject(Duration.ofSeconds(3)))
                        .build());
        try (Connection c = tx()) {
            assertThat(phases.begin(c, other)).isInstanceOf(PhaseStart.KeyReused.class);
            PhaseStart same = phases.begin(
                    c,
                    IdempotencyRequest.of(
                            request(order, LONG).scope(), request(order, LONG).fingerprint(), other.policy()));
            assertThat(same)
                    .isInstanceOfSatisfying(
                            PhaseStart.InFlight.class,
                            f -> assertThat(f.retryAfter()).isEqualTo(Duration.ofSeconds(3)));
            c.rollback();
        }
    }

    @Test
    void aTableOfTheFirstMigrationIsUpgraded() throws Exception {
        TestDatabase old = TestDatabase.createEmpty("idem_v1", 2);
        try {
            old.execute(new String(
                    PostgresSchema.class
                            .getResourceAsStream("/" + PostgresSchema.MIGRATION_RESOURCE)
                            .readAllBytes(),
                    StandardCharsets.UTF_8));
            assertThatThrownBy(() -> PostgresSchema.verify(old.pool(), PostgresStoreConfig.ofDefaults()))
                    .hasMessageContaining("lacks the columns of " + PostgresSchema.PHASES_MIGRATION_RESOURCE)
                    .hasMessageContaining("PostgresSchema.migrate");
            assertThat(PostgresSchema.migrate(old.pool()))
                    .as("upgraded, not created")
                    .isFalse();
            PostgresSchema.verify(old.pool(), PostgresStoreConfig.ofDefaults());
        } finally {
            old.close();
        }
    }

    private static PhaseStart awaitOwned(String order) {
        return awaitOwned(order, SHORT);
    }

    /** Begins the order's phase until this request owns it (the earlier owner's lease ran out). */
    private static PhaseStart awaitOwned(String order, IdempotencyPolicy policy) {
        return await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(100))
                .until(
                        () -> {
                            try (Connection c = tx()) {
                                PhaseStart begun = phases.begin(c, request(order, policy));
                                c.commit();
                                return begun;
                            }
                        },
                        b -> b instanceof PhaseStart.Owned);
    }

    private static Connection tx() throws SQLException {
        Connection c = database.pool().getConnection();
        c.setAutoCommit(false);
        return c;
    }

    private static void insertShipment(Connection c, String id, String order) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO shipments (id, order_id) VALUES (?, ?)")) {
            s.setString(1, id);
            s.setString(2, order);
            s.executeUpdate();
        }
    }

    private static void setLabel(Connection c, String id, String label) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE shipments SET label = ? WHERE id = ?")) {
            s.setString(1, label);
            s.setString(2, id);
            s.executeUpdate();
        }
    }

    private static long shipments(String order) throws SQLException {
        try (Connection c = database.pool().getConnection();
                PreparedStatement s = c.prepareStatement("SELECT count(*) FROM shipments WHERE order_id = ?")) {
            s.setString(1, order);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static String label(String id) throws SQLException {
        try (Connection c = database.pool().getConnection();
                PreparedStatement s = c.prepareStatement("SELECT label FROM shipments WHERE id = ?")) {
            s.setString(1, id);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }
}
