package dev.exactly.idempotency.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.util.PSQLException;

/**
 * The record's row rule and {@code recovery_due}, kept by the row trigger of migration V9: raw SQL that breaks
 * the rule is refused as the CHECK constraint refused it (SQLSTATE 23514, the constraint's name), on insert and
 * on update, and {@code recovery_due} follows every change of what it is computed from, as the generated
 * column did.
 */
class RowRulesTest {
    private static final String COLUMNS =
            "INSERT INTO idempotency_records (scope_key, status, fingerprint, owner_token, "
                    + "created_at, lease_expires_at, expires_at, retention, response_status, response_headers, response_body, "
                    + "updated_at) VALUES ";
    private static DataSource schema;

    @BeforeAll
    static void migrate() {
        schema = TestPostgres.freshSchema("row_rules");
        PostgresSchema.migrate(schema);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            processing without an owner | 'PROCESSING' | NULL | now() + interval '1 minute' | NULL | NULL | NULL
            processing without a lease  | 'PROCESSING' | 'o'  | NULL                        | NULL | NULL | NULL
            completed without a status  | 'COMPLETED'  | 'o'  | NULL                        | NULL | '{}' | '\\x'
            completed without headers   | 'COMPLETED'  | 'o'  | NULL                        | 201  | NULL | '\\x'
            failed without a body       | 'FAILED'     | 'o'  | NULL                        | 500  | '{}' | NULL
            a status the store has not  | 'DONE'       | 'o'  | now() + interval '1 minute' | 201  | '{}' | '\\x'
            """)
    void anInsertThatBreaksTheRuleIsRefusedAsTheCheckRefusedIt(
            String rule,
            String status,
            String owner,
            String lease,
            String responseStatus,
            String headers,
            String body) {
        String row = "(md5(random()::text), " + status + ", 'sha256:x', " + owner + ", now(), " + lease
                + ", now() + interval '1 hour', interval '1 hour', " + responseStatus + ", " + headers + ", " + body
                + ", now())";
        assertThatThrownBy(() -> execute(COLUMNS + row)).as(rule).isInstanceOfSatisfying(PSQLException.class, e -> {
            assertThat(e.getSQLState()).isEqualTo("23514");
            assertThat(e.getServerErrorMessage().getConstraint()).isEqualTo("idempotency_records_status_check");
            assertThat(e.getServerErrorMessage().getTable()).isEqualTo("idempotency_records");
        });
    }

    @Test
    void aNullStatusIsRefusedByItsNotNullAsBefore() {
        assertThatThrownBy(() -> execute(COLUMNS + "(md5(random()::text), NULL, 'sha256:x', 'o', now(), now(), "
                        + "now() + interval '1 hour', interval '1 hour', NULL, NULL, NULL, now())"))
                .isInstanceOfSatisfying(
                        PSQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23502"));
    }

    @Test
    void anUpdateThatBreaksTheRuleIsRefusedAndChangesNothing() throws SQLException {
        String key = insertPhase("now() + interval '1 hour'");
        assertThatThrownBy(() ->
                        execute("UPDATE idempotency_records SET status = 'COMPLETED' WHERE scope_key = '" + key + "'"))
                .isInstanceOfSatisfying(
                        PSQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23514"));
        assertThatThrownBy(() ->
                        execute("UPDATE idempotency_records SET owner_token = NULL WHERE scope_key = '" + key + "'"))
                .isInstanceOfSatisfying(
                        PSQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23514"));
        assertThat(query(
                        "SELECT status || ' ' || owner_token FROM idempotency_records WHERE scope_key = '" + key + "'"))
                .isEqualTo("PROCESSING o");
    }

    @Test
    void recoveryDueFollowsTheLeaseOfAPhaseInProgressAndNothingElse() throws SQLException {
        String phase = insertPhase("'infinity'");
        assertThat(recoveryDue(phase)).isEqualTo("lease");

        execute("UPDATE idempotency_records SET lease_expires_at = lease_expires_at + interval '5 minutes' "
                + "WHERE scope_key = '" + phase + "'");
        assertThat(recoveryDue(phase)).as("a renewal").isEqualTo("lease");
        execute("UPDATE idempotency_records SET recovery_due = now() - interval '1 day' WHERE scope_key = '" + phase
                + "'");
        assertThat(recoveryDue(phase)).as("written directly, computed again").isEqualTo("lease");
        execute("UPDATE idempotency_records SET dead_lettered_at = now() WHERE scope_key = '" + phase + "'");
        assertThat(recoveryDue(phase)).as("a dead letter").isEqualTo("null");
        execute("UPDATE idempotency_records SET dead_lettered_at = NULL WHERE scope_key = '" + phase + "'");
        assertThat(recoveryDue(phase)).as("an operator's retry").isEqualTo("lease");
        execute("UPDATE idempotency_records SET status = 'COMPLETED', lease_expires_at = NULL, response_status = 201, "
                + "response_headers = '{}', response_body = '\\x', expires_at = now() + interval '1 hour' "
                + "WHERE scope_key = '" + phase + "'");
        assertThat(recoveryDue(phase)).as("finished").isEqualTo("null");

        String ordinary = insertPhase("now() + interval '1 hour'");
        assertThat(recoveryDue(ordinary)).as("an ordinary record in flight").isEqualTo("null");
        execute("UPDATE idempotency_records SET expires_at = 'infinity' WHERE scope_key = '" + ordinary + "'");
        assertThat(recoveryDue(ordinary)).as("made endless").isEqualTo("lease");
    }

    /** A processing record with a lease of a minute and the given expiry (SQL); its key. */
    private static String insertPhase(String expiresAt) throws SQLException {
        String key = query("SELECT md5(random()::text)");
        execute(COLUMNS + "('" + key + "', 'PROCESSING', 'sha256:x', 'o', now(), now() + interval '1 minute', "
                + expiresAt + ", interval '1 hour', NULL, NULL, NULL, now())");
        return key;
    }

    /** "lease" when recovery_due is the lease's end, "null" when it is null, else its value. */
    private static String recoveryDue(String key) throws SQLException {
        return query("SELECT CASE WHEN recovery_due IS NULL THEN 'null' WHEN recovery_due = lease_expires_at "
                + "THEN 'lease' ELSE recovery_due::text END FROM idempotency_records WHERE scope_key = '" + key + "'");
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = schema.getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static String query(String sql) throws SQLException {
        try (Connection c = schema.getConnection();
                Statement s = c.createStatement();
                ResultSet row = s.executeQuery(sql)) {
            assertThat(row.next()).as(sql).isTrue();
            return row.getString(1);
        }
    }
}
