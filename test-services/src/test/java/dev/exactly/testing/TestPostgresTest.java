package dev.exactly.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class TestPostgresTest {

    @Test
    void dropsTheSchemasItCreatedAndReportsOneALockStillHolds() throws Exception {
        DataSource first = TestPostgres.freshSchema("drop_me");
        DataSource second = TestPostgres.freshSchema("drop_me_locked");
        String firstSchema = schemaOf(first);
        String secondSchema = schemaOf(second);
        try (Connection c = first.getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE t (k int PRIMARY KEY)");
            s.execute("INSERT INTO t VALUES (1)");
        }
        try (Connection holder = second.getConnection();
                Statement s = holder.createStatement()) {
            s.execute("CREATE TABLE t (k int PRIMARY KEY)");
            holder.setAutoCommit(false);
            s.execute("LOCK TABLE t IN ACCESS SHARE MODE");

            assertThat(TestPostgres.dropCreatedSchemas()).containsExactly(secondSchema);
            assertThat(exists(firstSchema)).isFalse();
            assertThat(exists(secondSchema)).isTrue();

            holder.rollback();
        }
        assertThat(TestPostgres.dropCreatedSchemas()).isEmpty();
        assertThat(exists(secondSchema)).isFalse();
    }

    private static String schemaOf(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet row = s.executeQuery("SELECT current_schema()")) {
            row.next();
            return row.getString(1);
        }
    }

    private static boolean exists(String schema) throws SQLException {
        try (Connection c = TestPostgres.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet row = s.executeQuery("SELECT count(*) FROM pg_namespace WHERE nspname = '" + schema + "'")) {
            row.next();
            return row.getInt(1) == 1;
        }
    }
}
