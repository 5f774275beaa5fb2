package dev.exactly.payments.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Checkpoint;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseRecord;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.RecoveryPolicy;
import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Upgrading a database written by the version before atomic phases (payments migrations up to V2): every
 * open charge gets a phase record that never expires, with the row's recovery point, attempts and dead
 * letter; a live owner keeps its record, every other open charge (expired lease, or record expired and
 * purged during an outage) is taken over by the first recovery round, and finished charges are untouched.
 */
class OpenChargesMigrationTest {
    private static final IdempotencyPolicy POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30))
            .retention(Duration.ofHours(24))
            .keepAlive(KeepAlive.disabled())
            .build();

    @Test
    void openChargesBecomeOpenPhasesAndRecoveryTakesOverTheAbandonedOnes() throws Exception {
        DataSource dataSource = TestPostgres.freshSchema("pay_upgrade");
        MigrationSupport.flyway(dataSource, "classpath:db/ledger", "flyway_history_ledger", null);
        MigrationSupport.flyway(dataSource, "classpath:db/idempotency", "flyway_history_idempotency", null);
        MigrationSupport.flyway(dataSource, "classpath:db/payments", "flyway_history_payments", "2");

        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            // the state the version before left behind
            charge(c, "ch_live", "pending", "charge_created", 0, null);
            record(c, "ch_live", "PROCESSING", "interval '30 seconds'", "statement_timestamp() + interval '1 day'");
            charge(c, "ch_expired", "pending", "processor_called", 2, null);
            record(c, "ch_expired", "PROCESSING", "interval '-5 seconds'", "statement_timestamp() + interval '1 day'");
            charge(c, "ch_orphan", "pending", "charge_created", 1, null); // its record was purged
            charge(c, "ch_dead", "dead_lettered", "processor_called", 5, Instant.parse("2026-11-30T10:00:00Z"));
            record(c, "ch_dead", "PROCESSING", "interval '-1 hour'", "statement_timestamp() + interval '1 day'");
            charge(c, "ch_done", "failed", "finished", 0, null);
            s.execute("""
                    INSERT INTO idempotency_records (scope_key, status, fingerprint, owner_token, created_at,
                        expires_at, retention, response_status, response_headers, response_body, updated_at)
                    VALUES ('%s', 'COMPLETED', 'sha256-jcs:ch_done', 'tok_ch_done', statement_timestamp(),
                        statement_timestamp() + interval '1 day', interval '24 hours', 201, '{}', '\\x7b7d',
                        statement_timestamp())""".formatted(MigrationSupport.sha256Hex("ch_done")));
        }

        DatabaseConfiguration.migrate(dataSource);

        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(dataSource)) {
            AtomicPhases phases = AtomicPhases.builder(store)
                    .recoveryPolicy(RecoveryPolicy.custom().parallelism(8).build())
                    .build();

            PhaseRecord live = phases.find(scope("ch_live")).orElseThrow();
            assertThat(live.inProgress()).isTrue();
            assertThat(live.record().owner().value())
                    .as("a live owner keeps its record")
                    .isEqualTo("tok_ch_live");
            assertThat(live.record().expiresAt()).isAfter(Instant.parse("9999-01-01T00:00:00Z"));
            assertThat(live.checkpoint()).isEqualTo(Checkpoint.of("charge_created"));

            PhaseRecord expired = phases.find(scope("ch_expired")).orElseThrow();
            assertThat(expired.checkpoint()).isEqualTo(Checkpoint.of("processor_called"));
            assertThat(expired.attempts()).isEqualTo(2);
            assertThat(expired.lastError()).isEqualTo("error of ch_expired");
            assertThat(expired.record().owner().value()).isNotEqualTo("tok_ch_expired");

            PhaseRecord orphan = phases.find(scope("ch_orphan")).orElseThrow();
            assertThat(orphan.status()).isEqualTo(RecordStatus.PROCESSING);
            assertThat(orphan.record().fingerprint()).isEqualTo(new Fingerprint("sha256-jcs", "ch_orphan"));
            assertThat(orphan.checkpoint()).isEqualTo(Checkpoint.of("charge_created"));
            assertThat(orphan.attempts()).isEqualTo(1);

            PhaseRecord dead = phases.find(scope("ch_dead")).orElseThrow();
            assertThat(dead.deadLettered()).isTrue();
            assertThat(dead.deadLetteredAt()).isEqualTo(Instant.parse("2026-11-30T10:00:00Z"));
            assertThat(dead.attempts()).isEqualTo(5);
            assertThat(phases.deadLetters(10)).extracting(PhaseRecord::key).containsExactly(scope("ch_dead"));

            PhaseRecord done = phases.find(scope("ch_done")).orElseThrow();
            assertThat(done.status()).isEqualTo(RecordStatus.COMPLETED);
            assertThat(done.record().expiresAt()).isBefore(Instant.parse("9999-01-01T00:00:00Z"));

            // the first recovery round takes over exactly the abandoned open charges
            List<Phase> resumed = new CopyOnWriteArrayList<>();
            int taken = phases.recovery(resumed::add, POLICY).runOnce();
            assertThat(taken).isEqualTo(2);
            assertThat(resumed)
                    .extracting(Phase::key)
                    .containsExactlyInAnyOrder(scope("ch_expired"), scope("ch_orphan"));
            assertThat(resumed).allSatisfy(p -> assertThat(p.takeover()).isTrue());
            assertThat(resumed)
                    .filteredOn(p -> p.key().equals(scope("ch_expired")))
                    .singleElement()
                    .satisfies(p -> assertThat(p.checkpoint()).isEqualTo(Checkpoint.of("processor_called")));
        }
    }

    private static ScopeKey scope(String chargeId) {
        return new ScopeKey(MigrationSupport.sha256Hex(chargeId));
    }

    private static void charge(
            Connection c, String id, String status, String recoveryPoint, int attempts, Instant deadLetteredAt)
            throws SQLException {
        try (PreparedStatement s = c.prepareStatement("""
                INSERT INTO payments_charge (id, tenant, scope_key, fingerprint, customer, amount, currency, metadata,
                    status, recovery_point, downstream_key, processor_request, attempts, last_error, dead_lettered_at,
                    response_status, response_type, response_body, created_at, updated_at)
                VALUES (?, 'acme', ?, ?, 'cus_1', 1000, 'EUR', '{}', ?, ?, ?, '{}', ?, ?, ?,
                    CASE WHEN ? THEN 402 END, CASE WHEN ? THEN 'application/problem+json' END,
                    CASE WHEN ? THEN '\\x7b7d'::bytea END, statement_timestamp(), statement_timestamp())""")) {
            s.setString(1, id);
            s.setString(2, MigrationSupport.sha256Hex(id));
            s.setString(3, "sha256-jcs:" + id);
            s.setString(4, status);
            s.setString(5, recoveryPoint);
            s.setString(6, "exactly_" + id);
            s.setInt(7, attempts);
            s.setString(8, attempts > 0 ? "error of " + id : null);
            s.setObject(9, deadLetteredAt == null ? null : java.sql.Timestamp.from(deadLetteredAt));
            boolean finished = status.equals("succeeded") || status.equals("failed");
            for (int i = 10; i <= 12; i++) {
                s.setBoolean(i, finished);
            }
            s.executeUpdate();
        }
    }

    private static void record(Connection c, String chargeId, String status, String leaseFromNow, String expires)
            throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("INSERT INTO idempotency_records (scope_key, status, fingerprint, owner_token, created_at, "
                    + "lease_expires_at, expires_at, retention, recovery_point, updated_at) VALUES ('"
                    + MigrationSupport.sha256Hex(chargeId)
                    + "', '" + status + "', 'sha256-jcs:" + chargeId + "', 'tok_" + chargeId
                    + "', statement_timestamp(), "
                    + "statement_timestamp() + " + leaseFromNow + ", " + expires + ", interval '24 hours', NULL, "
                    + "statement_timestamp())");
        }
    }
}
