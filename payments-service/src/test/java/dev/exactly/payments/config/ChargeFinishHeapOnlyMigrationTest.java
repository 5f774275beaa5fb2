package dev.exactly.payments.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.charge.ChargeRepository;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Upgrading a database written by payments migration V9 to V10: the indexes of open and authorized charges
 * go, so that a charge's finish changes no indexed column and is a heap-only update, and the operator's lists
 * and the expiry of authorizations still find exactly the charges they found before, the existing ones
 * included: stuck charges through their durable records, dead-lettered ones through the time of their dead
 * letter (filled in for a dead letter that had none), authorizations through the ledger's open holds.
 */
class ChargeFinishHeapOnlyMigrationTest {
    private final ChargeRepository charges = new ChargeRepository();

    @Test
    void existingChargesAreFoundAfterTheUpgradeAndAFinishWritesNoIndexEntry() throws Exception {
        DataSource dataSource = TestPostgres.freshSchema("pay_hot");
        MigrationSupport.flyway(dataSource, "classpath:db/ledger", "flyway_history_ledger", null);
        MigrationSupport.flyway(dataSource, "classpath:db/idempotency", "flyway_history_idempotency", null);
        MigrationSupport.flyway(dataSource, "classpath:db/payments", "flyway_history_payments", "9");

        long openHold;
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            // the state V9 left behind
            charge(c, "ch_stale", "pending", 0, null, null, Duration.ZERO);
            record(c, "ch_stale", "interval '-5 seconds'", null);
            charge(c, "ch_live", "pending", 0, null, null, Duration.ZERO);
            record(c, "ch_live", "interval '30 seconds'", null);
            charge(c, "ch_retrying", "pending", 2, null, null, Duration.ZERO);
            record(c, "ch_retrying", "interval '30 seconds'", null);
            // dead-lettered before V3 wrote the time of a dead letter: the charge row has none
            charge(c, "ch_dead", "dead_lettered", 5, null, null, Duration.ZERO);
            record(c, "ch_dead", "interval '-1 hour'", "statement_timestamp()");
            charge(c, "ch_failed", "failed", 0, null, null, Duration.ZERO);

            s.execute("""
                    INSERT INTO ledger_account (code, type, normal_balance, currency, created_at) VALUES
                        ('customer:acme:cus_1:EUR', 'liability', 'credit', 'EUR', statement_timestamp()),
                        ('clearing:acme:EUR', 'asset', 'debit', 'EUR', statement_timestamp())""");
            openHold = hold(c, "hold:ch_auth");
            long resolvedHold = hold(c, "hold:ch_voided");
            c.setAutoCommit(false);
            s.execute(
                    "SELECT ledger_write_entry('void', " + resolvedHold
                            + ", 'void:ch_voided', 'void', statement_timestamp(), "
                            + "(SELECT array_agg(p.account_id ORDER BY p.line) FROM ledger_posting p WHERE p.entry_id = "
                            + resolvedHold + "), "
                            + "'{EUR,EUR}', '{credit,debit}', '{800,800}', '{t,t}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}')");
            c.commit();
            c.setAutoCommit(true);
            charge(c, "ch_auth", "authorized", 0, null, openHold, Duration.ofHours(2));
            charge(c, "ch_auth_recent", "authorized", 0, null, hold(c, "hold:ch_auth_recent"), Duration.ZERO);
            charge(c, "ch_voided", "voided", 0, null, resolvedHold, Duration.ofHours(2));
        }

        DatabaseConfiguration.migrate(dataSource);

        try (Connection c = dataSource.getConnection()) {
            assertThat(ids(charges.stuck(c, 10).stream()
                            .map(ChargeRepository.WithLease::charge)
                            .toList()))
                    .as("stuck: pending with an expired lease or failed attempts")
                    .containsExactlyInAnyOrder("ch_stale", "ch_retrying");
            List<ChargeRepository.WithLease> dead = charges.deadLettered(c, 10);
            assertThat(ids(dead.stream().map(ChargeRepository.WithLease::charge).toList()))
                    .containsExactly("ch_dead");
            assertThat(dead.getFirst().leaseExpiresAt()).isNotNull();
            c.setAutoCommit(false);
            assertThat(ids(charges.lockExpiredAuthorizations(c, Instant.now().minus(Duration.ofHours(1)), 10)))
                    .as("authorized before the cutoff, hold still open")
                    .containsExactly("ch_auth");
            c.rollback();
            c.setAutoCommit(true);
            assertThat(indexes(c))
                    .contains("payments_charge_dead_lettered_idx", "payments_charge_hold_idx")
                    .doesNotContain("payments_charge_open_idx", "payments_charge_authorized_idx");

            // a new charge and its finish, as phase 1 and phase 3 write them: the finish is a heap-only update
            c.setAutoCommit(false);
            charge(c, "ch_new", "pending", 0, null, null, Duration.ZERO);
            try (Statement s = c.createStatement()) {
                assertThat(s.executeUpdate("""
                        UPDATE payments_charge SET status = 'failed', recovery_point = 'finished', failure_code = 'card_declined',
                            response_status = 402, response_type = 'application/problem+json', response_body = '\\x7b7d',
                            response_location = NULL, hold_entry_id = coalesce(NULL, hold_entry_id),
                            updated_at = statement_timestamp(), finished_at = statement_timestamp()
                        WHERE id = 'ch_new' AND status IN ('pending', 'dead_lettered')""")).isEqualTo(1);
                try (ResultSet rs = s.executeQuery("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables "
                        + "WHERE relid = 'payments_charge'::regclass")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getLong(1)).isEqualTo(1);
                    assertThat(rs.getLong(2)).as("heap-only updates").isEqualTo(1);
                }
            }
            c.commit();
            c.setAutoCommit(true);
            assertThat(ids(charges.stuck(c, 10).stream()
                            .map(ChargeRepository.WithLease::charge)
                            .toList()))
                    .containsExactlyInAnyOrder("ch_stale", "ch_retrying");
        }
    }

    @Test
    void theExpiryOfAuthorizationsReadsTheOpenHoldsNotTheChargesHistory() throws Exception {
        DataSource dataSource = TestPostgres.freshSchema("pay_sweep");
        DatabaseConfiguration.migrate(dataSource);
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute("""
                    INSERT INTO ledger_account (code, type, normal_balance, currency, created_at) VALUES
                        ('customer:acme:cus_1:EUR', 'liability', 'credit', 'EUR', statement_timestamp()),
                        ('clearing:acme:EUR', 'asset', 'debit', 'EUR', statement_timestamp())""");
            // a service's history: finished charges, no longer anyone's concern (not analysed yet: autovacuum
            // analyses a busy table's statistics late, and the plan must not depend on them)
            s.execute("""
                    INSERT INTO payments_charge (id, tenant, scope_key, fingerprint, customer, amount, currency, metadata,
                        status, recovery_point, downstream_key, processor_request, attempts, failure_code, response_status,
                        response_type, response_body, created_at, updated_at)
                    SELECT 'ch_old_' || n, 'acme', md5('ch_old_' || n) || md5(n::text), 'sha256-jcs:ch_old_' || n, 'cus_1',
                        800, 'EUR', '{}', 'failed', 'finished', 'exactly_ch_old_' || n, '{}', 0, 'card_declined', 402,
                        'application/problem+json', '\\x7b7d', statement_timestamp() - interval '3 days' + n * interval '1 second',
                        statement_timestamp()
                    FROM generate_series(1, 20000) AS n""");
            charge(c, "ch_auth", "authorized", 0, null, hold(c, "hold:ch_auth"), Duration.ofHours(2));
            charge(c, "ch_auth_recent", "authorized", 0, null, hold(c, "hold:ch_auth_recent"), Duration.ZERO);

            c.setAutoCommit(false);
            assertThat(ids(charges.lockExpiredAuthorizations(c, Instant.now().minus(Duration.ofHours(1)), 10)))
                    .containsExactly("ch_auth");
            // and as a pooled connection runs it after a few sweeps: a plan made for any cutoff
            s.execute("SET LOCAL plan_cache_mode = force_generic_plan");
            assertThat(ids(charges.lockExpiredAuthorizations(c, Instant.now().minus(Duration.ofHours(1)), 10)))
                    .containsExactly("ch_auth");
            try (ResultSet rs = s.executeQuery("SELECT seq_tup_read, idx_tup_fetch FROM pg_stat_xact_user_tables "
                    + "WHERE relid = 'payments_charge'::regclass")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1))
                        .as("charges read by scanning the table")
                        .isZero();
                assertThat(rs.getLong(2))
                        .as("charges fetched through an index: those of the open holds, twice")
                        .isLessThanOrEqualTo(4);
            }
            c.rollback();
        }
    }

    private static List<String> ids(List<ChargeRow> rows) {
        List<String> ids = new ArrayList<>();
        rows.forEach(r -> ids.add(r.id()));
        return ids;
    }

    private static List<String> indexes(Connection c) throws SQLException {
        List<String> names = new ArrayList<>();
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
                        + "AND tablename = 'payments_charge'")) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        }
        return names;
    }

    /** A hold of 800 on the customer's account, as an authorization writes it; its entry id. */
    private static long hold(Connection c, String ref) throws SQLException {
        c.setAutoCommit(false);
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT entry_id FROM ledger_write_entry('pending', NULL, '" + ref
                                + "', 'hold', statement_timestamp(), (SELECT array_agg(id ORDER BY code DESC) FROM ledger_account), "
                                + "'{EUR,EUR}', '{debit,credit}', '{800,800}', '{t,t}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}')")) {
            assertThat(rs.next()).isTrue();
            long id = rs.getLong(1);
            c.commit();
            return id;
        } finally {
            c.setAutoCommit(true);
        }
    }

    private static void charge(
            Connection c,
            String id,
            String status,
            int attempts,
            Instant deadLetteredAt,
            Long holdEntryId,
            Duration age)
            throws SQLException {
        boolean finished = !status.equals("pending") && !status.equals("dead_lettered");
        try (PreparedStatement s = c.prepareStatement("""
                INSERT INTO payments_charge (id, tenant, scope_key, fingerprint, customer, amount, currency, metadata,
                    status, recovery_point, downstream_key, processor_request, attempts, last_error, dead_lettered_at,
                    hold_entry_id, response_status, response_type, response_body, created_at, updated_at)
                VALUES (?, 'acme', ?, ?, 'cus_1', 800, 'EUR', '{}', ?, ?, ?, '{}', ?, ?, ?, ?,
                    CASE WHEN ? THEN 201 END, CASE WHEN ? THEN 'application/json' END,
                    CASE WHEN ? THEN '\\x7b7d'::bytea END, statement_timestamp() - ?::interval, statement_timestamp())""")) {
            s.setString(1, id);
            s.setString(2, MigrationSupport.sha256Hex(id));
            s.setString(3, "sha256-jcs:" + id);
            s.setString(4, status);
            s.setString(5, finished ? "finished" : "charge_created");
            s.setString(6, "exactly_" + id);
            s.setInt(7, attempts);
            s.setString(8, attempts > 0 ? "error of " + id : null);
            s.setObject(9, deadLetteredAt == null ? null : java.sql.Timestamp.from(deadLetteredAt));
            s.setObject(10, holdEntryId);
            for (int i = 11; i <= 13; i++) {
                s.setBoolean(i, finished);
            }
            s.setString(14, age.toSeconds() + " seconds");
            s.executeUpdate();
        }
    }

    private static void record(Connection c, String chargeId, String leaseFromNow, String deadLetteredAt)
            throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("INSERT INTO idempotency_records (scope_key, status, fingerprint, owner_token, created_at, "
                    + "lease_expires_at, expires_at, retention, recovery_point, updated_at, dead_lettered_at) VALUES ('"
                    + MigrationSupport.sha256Hex(chargeId) + "', 'PROCESSING', 'sha256-jcs:" + chargeId + "', 'tok_"
                    + chargeId
                    + "', statement_timestamp(), statement_timestamp() + " + leaseFromNow + ", 'infinity', "
                    + "interval '24 hours', 'charge_created', statement_timestamp(), "
                    + (deadLetteredAt == null ? "NULL" : deadLetteredAt) + ")");
        }
    }
}
