package dev.exactly.idempotency.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The one JDBC command template of this module: prepares a statement, binds, runs it under the statement
 * timeout ({@link StatementWatchdog}: cancelled as {@link Statement#setQueryTimeout} would, without a timer
 * task per statement), maps, and closes everything. It neither commits nor translates exceptions; callers
 * decide.
 */
final class Jdbc {
    private final long timeoutNanos;

    /** @param statementTimeout whole seconds (checked by {@link PostgresStoreConfig}), JDBC's unit */
    Jdbc(Duration statementTimeout) {
        this.timeoutNanos = statementTimeout.toNanos();
    }

    /** Binds the parameters of one statement. */
    @FunctionalInterface
    interface Binder {
        void bind(PreparedStatement statement) throws SQLException;
    }

    /** Maps the current row of a result set. */
    @FunctionalInterface
    interface RowMapper<T extends @Nullable Object> {
        T map(ResultSet row) throws SQLException;
    }

    /** Runs a statement that returns rows, and maps every row. */
    <T extends @Nullable Object> List<T> query(Connection connection, String sql, Binder binder, RowMapper<T> mapper)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            binder.bind(statement);
            try (ResultSet rows = executeQuery(statement)) {
                List<T> result = new ArrayList<>(1);
                while (rows.next()) {
                    result.add(mapper.map(rows));
                }
                return result;
            }
        }
    }

    /** Runs a statement that returns an update count. */
    int update(Connection connection, String sql, Binder binder) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            binder.bind(statement);
            try (StatementWatchdog.Watch watch = StatementWatchdog.watch(statement, timeoutNanos)) {
                return statement.executeUpdate();
            }
        }
    }

    /** Runs parameterless SQL text, which may hold several statements (a migration script, LISTEN). */
    void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement();
                StatementWatchdog.Watch watch = StatementWatchdog.watch(statement, timeoutNanos)) {
            statement.execute(sql);
        }
    }

    private ResultSet executeQuery(PreparedStatement statement) throws SQLException {
        try (StatementWatchdog.Watch watch = StatementWatchdog.watch(statement, timeoutNanos)) {
            return statement.executeQuery();
        }
    }
}
