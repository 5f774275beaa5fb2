package dev.exactly.payments.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The row rules of a charge hold for a writer that bypasses the service (migration V8 checks them in a
 * constraint trigger): every insert or update that breaks one is refused as the CHECK constraint refused
 * it, with SQLSTATE 23514 and the constraint's name, and nothing of the statement is kept.
 */
class ChargeRulesTest {
    private static DataSource dataSource;

    @BeforeAll
    static void migrate() {
        dataSource = TestPostgres.freshSchema("pay_rules");
        for (String[] set : new String[][] {
            {"classpath:db/ledger", "flyway_history_ledger"},
            {"classpath:db/idempotency", "flyway_history_idempotency"},
            {"classpath:db/payments", "flyway_history_payments"}
        }) {
            Flyway.configure()
                    .dataSource(dataSource)
                    .locations(set[0])
                    .table(set[1])
                    .baselineOnMigrate(true)
                    .baselineVersion("0")
                    .load()
                    .migrate();
        }
    }

    /** A pending charge as phase 1 inserts it, with this amount and status (SQL text). */
    private static String insert(String id, String amount, String status) {
        return "INSERT INTO payments_charge (id, tenant, scope_key, fingerprint, customer, amount, currency, metadata, "
                + "status, recovery_point, downstream_key, processor_request, created_at, updated_at) VALUES ('" + id
                + "', 'acme', 'scope_" + id + "', 'sha256-jcs:" + id + "', 'cus_1', " + amount + ", 'EUR', '{}', '"
                + status
                + "', 'charge_created', 'exactly_" + id + "', '{}', statement_timestamp(), statement_timestamp())";
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static long count(String id) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                var rs = s.executeQuery("SELECT count(*) FROM payments_charge WHERE id = '" + id + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "payments_charge_amount_check   | amount = 0",
                "payments_charge_refund_check   | amount_refunded = 1001",
                "payments_charge_refund_check   | amount_refunded = -1",
                "payments_charge_status_check   | status = 'lost', response_status = 201, response_type = 'application/json', response_body = '\\x7b7d'::bytea",
                "payments_charge_finished_check | status = 'failed', recovery_point = 'finished'",
                "payments_charge_entry_check    | status = 'succeeded', response_status = 201, response_type = 'application/json', response_body = '\\x7b7d'::bytea",
                "payments_charge_hold_check     | status = 'authorized', response_status = 201, response_type = 'application/json', response_body = '\\x7b7d'::bytea",
                "payments_charge_captured_check | amount_captured = 1001",
                "payments_charge_captured_check | amount_captured = 0",
                "payments_charge_captured_check | amount_captured = 10, amount_refunded = 11",
            })
    void anUpdateThatBreaksARuleIsRefusedUnderTheRulesName(String rule, String assignments) throws Exception {
        String id = "ch_upd_" + Integer.toUnsignedString((rule + assignments).hashCode());
        execute(insert(id, "1000", "pending"));
        assertThatThrownBy(() -> execute("UPDATE payments_charge SET " + assignments + " WHERE id = '" + id + "'"))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("violates check constraint \"" + rule + "\"")
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("23514");
    }

    @ParameterizedTest
    @CsvSource({"payments_charge_amount_check, -5, pending", "payments_charge_finished_check, 1000, failed"})
    void anInsertThatBreaksARuleKeepsNothing(String rule, String amount, String status) throws Exception {
        String id = "ch_ins_" + status;
        assertThatThrownBy(() -> execute(insert(id, amount, status)))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("violates check constraint \"" + rule + "\"")
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("23514");
        assertThat(count(id)).isZero();
    }

    @Test
    void aChargeThatKeepsTheRulesIsWrittenAndFinished() throws Exception {
        execute(insert("ch_ok", "1000", "pending"));
        execute("""
                UPDATE payments_charge SET status = 'succeeded', recovery_point = 'finished', ledger_entry_id = 1,
                    response_status = 201, response_type = 'application/json', response_body = '\\x7b7d'::bytea,
                    amount_refunded = 400, amount_captured = NULL
                WHERE id = 'ch_ok'""");
        assertThat(count("ch_ok")).isOne();
    }
}
