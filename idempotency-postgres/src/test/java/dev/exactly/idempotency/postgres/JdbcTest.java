package dev.exactly.idempotency.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.testing.TestPostgres;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The statement timeout of {@link Jdbc}: a statement past it is cancelled, one that finished never is. */
class JdbcTest {
    private static final DataSource DATABASE = TestPostgres.dataSource();
    private final Jdbc jdbc = new Jdbc(Duration.ofSeconds(1));

    @Test
    void aStatementPastItsTimeoutIsCancelledAsTheQueryTimeoutWould() throws SQLException {
        try (Connection c = DATABASE.getConnection()) {
            assertCancelledAfterItsTimeout(c);
            // the connection serves the next statement
            assertThat(jdbc.query(c, "SELECT 1", s -> {}, row -> row.getInt(1))).containsExactly(1);
            jdbc.execute(c, "SELECT pg_sleep(0.1)");
        }
    }

    @Test
    void statementsThatFinishedAreNeverCancelledLater() throws SQLException {
        try (Connection c = DATABASE.getConnection()) {
            for (int i = 0; i < 200; i++) {
                int value = i;
                assertThat(jdbc.query(c, "SELECT ?::int", s -> s.setInt(1, value), row -> row.getInt(1)))
                        .containsExactly(i);
            }
            // longer than their timeouts, on the same connection, outside the watch: nothing cancels it
            try (Statement s = c.createStatement();
                    ResultSet row = s.executeQuery("SELECT pg_sleep(1.5), 7")) {
                assertThat(row.next()).isTrue();
                assertThat(row.getInt(2)).isEqualTo(7);
            }
        }
    }

    @Test
    void aStatementThatFindsEverySlotTakenIsWatchedAllTheSame() throws SQLException {
        Statement standIn = (Statement) Proxy.newProxyInstance(
                Statement.class.getClassLoader(), new Class<?>[] {Statement.class}, (proxy, method, args) -> {
                    throw new UnsupportedOperationException(method.getName());
                });
        List<StatementWatchdog.Watch> taking = new ArrayList<>();
        try {
            for (int i = 0; i < 3 * StatementWatchdog.SLOTS; i++) { // every slot, and a crowd beyond them
                taking.add(
                        StatementWatchdog.watch(standIn, Duration.ofMinutes(10).toNanos()));
            }
            assertThat(StatementWatchdog.idle()).isFalse();
            try (Connection c = DATABASE.getConnection()) {
                assertCancelledAfterItsTimeout(c);
            }
        } finally {
            taking.forEach(StatementWatchdog.Watch::close);
        }
        // every watch left what it took: none is looked at again
        assertThat(StatementWatchdog.idle()).isTrue();
    }

    /** A statement of ten seconds under the timeout of one ends by its cancel (57014), one to four seconds on. */
    private void assertCancelledAfterItsTimeout(Connection c) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> jdbc.query(c, "SELECT pg_sleep(10)", s -> {}, row -> true))
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014"));
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isBetween(Duration.ofMillis(950), Duration.ofSeconds(4));
    }
}
