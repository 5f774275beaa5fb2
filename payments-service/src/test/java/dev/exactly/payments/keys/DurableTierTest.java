package dev.exactly.payments.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.Checkpoint;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseStart;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.Retry;
import dev.exactly.payments.config.DatabaseConfiguration;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.testing.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The durable tier's phases against a real PostgreSQL (a fresh schema with the service's migrations):
 * what {@code begin} finds, checkpoints kept across a takeover, every write of a stale owner refused, and
 * attempts handed over with their backoff until the dead letter.
 */
class DurableTierTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final IdempotencyPolicy POLICY = IdempotencyPolicy.custom()
            .lease(LEASE).retention(Duration.ofHours(1)).build();
    private static final StoredResponse ANSWER = new StoredResponse(201,
            Map.of("content-type", List.of("application/json"), "location", List.of("/v1/charges/ch_1")),
            "{\"id\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8));
    private static final AtomicInteger KEYS = new AtomicInteger();

    private static DataSource dataSource;
    private static Jdbc jdbc;
    private static DurableTier durable;
    private static IdempotentRoutes routes;

    @BeforeAll
    static void start() {
        dataSource = TestPostgres.freshSchema("pay_durable");
        DatabaseConfiguration.migrate(dataSource);
        jdbc = new Jdbc(dataSource);
        durable = new DurableTier(PostgresIdempotencyStore.create(dataSource), POLICY,
                new RetryPolicy(3, attempts -> Duration.ofSeconds(attempts * 10L)), InstantSource.system());
        routes = new IdempotentRoutes(POLICY);
    }

    @AfterAll
    static void stop() {
        durable.close();
    }

    private static IdempotencyRequest request(String key, String body) {
        return routes.request(IdempotentRoutes.CHARGES, "acme", IdempotencyKey.parse(key), body.getBytes(StandardCharsets.UTF_8),
                "application/json");
    }

    private static String newKey() {
        return "durable-" + KEYS.incrementAndGet();
    }

    private static PhaseStart begin(IdempotencyRequest request) {
        return jdbc.inTransaction(c -> durable.begin(c, request));
    }

    private static Phase owned(PhaseStart start) {
        assertThat(start).isInstanceOf(PhaseStart.Owned.class);
        return ((PhaseStart.Owned) start).phase();
    }

    private static boolean finish(Phase phase) {
        Boolean finished = jdbc.inTransaction(c -> durable.finish(c, phase, RecordStatus.COMPLETED, ANSWER));
        return finished;
    }

    private static boolean checkpoint(Phase phase, String name) {
        Boolean written = jdbc.inTransaction(c -> durable.checkpoint(c, phase, Checkpoint.of(name)));
        return written;
    }

    private static Retry retryLater(Phase phase) {
        return jdbc.inTransaction(c -> durable.retryLater(c, phase, "timeout"));
    }

    private static void expireLease(IdempotencyRequest request) {
        jdbc.inTransaction(c -> Jdbc.update(c, "UPDATE idempotency_records SET lease_expires_at = now() WHERE scope_key = ?",
                s -> s.setString(1, request.key().hash())));
    }

    @Test
    void beginFindsTheKeyOwnedInFlightReusedAndFinished() {
        IdempotencyRequest request = request(newKey(), "{\"amount\":100}");
        Phase phase = owned(begin(request));
        assertThat(phase.takeover()).isFalse();
        assertThat(phase.checkpoint()).isNull();
        assertThat(phase.attempts()).isZero();

        PhaseStart again = begin(request);
        assertThat(again).isInstanceOf(PhaseStart.InFlight.class);
        assertThat(((PhaseStart.InFlight) again).retryAfter()).isBetween(Duration.ofSeconds(1), LEASE);
        IdempotencyRequest other = request(request.scope().key().value(), "{\"amount\":200}");
        assertThat(begin(other)).isInstanceOf(PhaseStart.KeyReused.class);

        assertThat(finish(phase)).isTrue();
        PhaseStart replay = begin(request);
        assertThat(replay).isInstanceOf(PhaseStart.Replay.class);
        assertThat(((PhaseStart.Replay) replay).response()).isEqualTo(ANSWER);
        assertThat(((PhaseStart.Replay) replay).expiresAt()).isAfter(Instant.now().plus(Duration.ofMinutes(50)));
        assertThat(begin(other)).as("a finished key with another payload").isInstanceOf(PhaseStart.KeyReused.class);
    }

    @Test
    void aBeginThatRollsBackLeavesNoRecord() {
        IdempotencyRequest request = request(newKey(), "{\"amount\":100}");
        jdbc.inTransaction(c -> {
            owned(durable.begin(c, request));
            Jdbc.rollback(c);
            return null;
        });
        assertThat(owned(begin(request)).takeover()).as("claimed afresh, not taken over").isFalse();
    }

    @Test
    void aTakeoverResumesFromTheLastCheckpointAndTheStaleOwnerIsFenced() {
        IdempotencyRequest request = request(newKey(), "{\"amount\":300}");
        Phase first = owned(begin(request));
        assertThat(checkpoint(first, "charge_created")).isTrue();
        expireLease(request);

        Phase second = jdbc.inTransaction(c -> durable.takeOver(c, request.key(), request.fingerprint())).orElseThrow();
        assertThat(second.takeover()).isTrue();
        assertThat(second.checkpoint()).isEqualTo(Checkpoint.of("charge_created"));
        Optional<Phase> third = jdbc.inTransaction(c -> durable.takeOver(c, request.key(), request.fingerprint()));
        assertThat(third).as("a live owner holds it").isEmpty();
        assertThat(second.owner()).isNotEqualTo(first.owner());

        assertThat(checkpoint(first, "processor_called")).isFalse();
        assertThat(finish(first)).isFalse();
        assertThat(retryLater(first)).isInstanceOf(Retry.Lost.class);
        assertThat(finish(second)).isTrue();
    }

    @Test
    void retryLaterHandsTheRequestOverWithItsBackoffUntilTheDeadLetter() {
        IdempotencyRequest request = request(newKey(), "{\"amount\":400}");
        Phase phase = owned(begin(request));
        insertChargeRow(request);

        Instant before = Instant.now();
        Retry first = retryLater(phase);
        assertThat(first).isInstanceOf(Retry.Scheduled.class);
        Retry.Scheduled scheduled = (Retry.Scheduled) first;
        assertThat(scheduled.attempt()).isEqualTo(1);
        assertThat(scheduled.nextAttemptAt()).isBetween(before.plusSeconds(10), Instant.now().plusSeconds(10));
        assertThat(begin(request)).as("the record waits for its next attempt").isInstanceOf(PhaseStart.InFlight.class);

        setAttempts(request, 1); // the caller records each attempt on the charge row
        Retry second = retryLater(phase);
        assertThat(second).isInstanceOf(Retry.Scheduled.class);
        assertThat(((Retry.Scheduled) second).attempt()).isEqualTo(2);
        assertThat(((Retry.Scheduled) second).nextAttemptAt()).as("the backoff grows")
                .isAfter(scheduled.nextAttemptAt().plusSeconds(5));

        setAttempts(request, 2);
        assertThat(retryLater(phase)).isEqualTo(new Retry.DeadLettered(3));
        // a dead-lettered request is handed over at once, for an operator's takeover
        await().atMost(Duration.ofSeconds(10)).until(() -> begin(request) instanceof PhaseStart.Owned o && o.phase().takeover());
    }

    private static void insertChargeRow(IdempotencyRequest request) {
        jdbc.inTransaction(c -> Jdbc.update(c, """
                INSERT INTO payments_charge (id, tenant, scope_key, fingerprint, customer, amount, currency, metadata,
                    status, recovery_point, downstream_key, processor_request, created_at, updated_at)
                VALUES (?, 'acme', ?, ?, 'cus_1', 400, 'usd', '{}', 'pending', 'charge_created', ?, '{}', now(), now())
                """, s -> {
                    String id = "ch_" + request.key().hash().substring(0, 20);
                    s.setString(1, id);
                    s.setString(2, request.key().hash());
                    s.setString(3, request.fingerprint().encoded());
                    s.setString(4, "exactly_" + id);
                }));
    }

    private static void setAttempts(IdempotencyRequest request, int attempts) {
        jdbc.inTransaction(c -> Jdbc.update(c, "UPDATE payments_charge SET attempts = ? WHERE scope_key = ?", s -> {
            s.setInt(1, attempts);
            s.setString(2, request.key().hash());
        }));
    }
}
