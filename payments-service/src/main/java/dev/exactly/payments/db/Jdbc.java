package dev.exactly.payments.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The one JDBC command template of the service: statements with bound parameters on a given
 * connection, and transactions on the pool. SQL failures become {@link DatabaseException}; one that came
 * before any statement (no connection) says so.
 */
public final class Jdbc {

    /** Binds the parameters of a statement. */
    @FunctionalInterface
    public interface Binder {
        void bind(PreparedStatement statement) throws SQLException;
    }

    /** Maps the current row. */
    @FunctionalInterface
    public interface RowMapper<T> {
        T map(ResultSet row) throws SQLException;
    }

    /** Work inside a transaction. */
    @FunctionalInterface
    public interface TxWork<T extends @Nullable Object> {
        T run(Connection connection) throws SQLException;
    }

    private final DataSource dataSource;

    public Jdbc(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /** Rows of a query on {@code connection}. */
    public static <T> List<T> query(Connection connection, String sql, Binder binder, RowMapper<T> mapper) {
        try (PreparedStatement s = connection.prepareStatement(sql)) {
            binder.bind(s);
            try (ResultSet rs = s.executeQuery()) {
                List<T> rows = new ArrayList<>();
                while (rs.next()) {
                    rows.add(mapper.map(rs));
                }
                return rows;
            }
        } catch (SQLException e) {
            throw new DatabaseException(e);
        }
    }

    /** The first row of a query on {@code connection}, if any. */
    public static <T> Optional<T> queryOne(Connection connection, String sql, Binder binder, RowMapper<T> mapper) {
        List<T> rows = query(connection, sql, binder, mapper);
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.getFirst());
    }

    /** Runs an insert, update or delete on {@code connection}; the number of rows it touched. */
    public static int update(Connection connection, String sql, Binder binder) {
        try (PreparedStatement s = connection.prepareStatement(sql)) {
            binder.bind(s);
            return s.executeUpdate();
        } catch (SQLException e) {
            throw new DatabaseException(e);
        }
    }

    /** A query in auto-commit mode on a pooled connection. */
    public <T> List<T> query(String sql, Binder binder, RowMapper<T> mapper) {
        return inTransaction(c -> query(c, sql, binder, mapper));
    }

    /** The first row of a query on a pooled connection, if any. */
    public <T> Optional<T> queryOne(String sql, Binder binder, RowMapper<T> mapper) {
        return inTransaction(c -> queryOne(c, sql, binder, mapper));
    }

    /**
     * Runs {@code work} in one transaction on a pooled connection: commits when it returns, rolls back
     * when it throws (anything, an {@link Error} included).
     */
    public <T extends @Nullable Object> T inTransaction(TxWork<T> work) {
        Connection pooled;
        try {
            pooled = dataSource.getConnection();
        } catch (SQLException e) {
            throw DatabaseException.unreachable(e);
        }
        try (Connection connection = pooled) {
            connection.setAutoCommit(false);
            try {
                T result = work.run(connection);
                connection.commit();
                return result;
            } catch (Throwable e) {
                rollbackQuietly(connection, e);
                throw e;
            } finally {
                connection.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw new DatabaseException(e);
        }
    }

    /** Rolls back, keeping {@code cause} as the primary failure. */
    public static void rollbackQuietly(Connection connection, Throwable cause) {
        try {
            connection.rollback();
        } catch (SQLException rollback) {
            cause.addSuppressed(rollback);
        }
    }

    /** Rolls back now (the work decided not to commit). */
    public static void rollback(Connection connection) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            throw new DatabaseException(e);
        }
    }

    public static @Nullable Instant instant(ResultSet row, String column) throws SQLException {
        Timestamp t = row.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }

    public static @Nullable Long nullableLong(ResultSet row, String column) throws SQLException {
        long value = row.getLong(column);
        return row.wasNull() ? null : value;
    }

    public static @Nullable Integer nullableInt(ResultSet row, String column) throws SQLException {
        int value = row.getInt(column);
        return row.wasNull() ? null : value;
    }

    public static Timestamp timestamp(Instant instant) {
        return Timestamp.from(instant);
    }
}
