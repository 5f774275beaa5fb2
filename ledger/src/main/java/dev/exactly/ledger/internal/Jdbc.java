package dev.exactly.ledger.internal;

import dev.exactly.ledger.LedgerException;
import dev.exactly.ledger.LedgerRetryableException;
import dev.exactly.ledger.LedgerStorageException;
import dev.exactly.ledger.LedgerValidationException;
import dev.exactly.ledger.LedgerValidationException.Reason;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The one JDBC template of the ledger: runs work on a connection, in a transaction or not, and
 * translates every {@link SQLException} into a {@link LedgerException}.
 */
public final class Jdbc {

    private Jdbc() {}

    /** Work on a connection. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /** Runs {@code work} on the caller's connection, inside whatever transaction it has. */
    public static <T> T onConnection(Connection connection, Work<T> work) {
        try {
            return work.run(connection);
        } catch (SQLException e) {
            throw translate(e);
        }
    }

    /**
     * Runs writing {@code work} in the caller's transaction. A connection in auto-commit mode has no
     * transaction that spans statements, so the work then runs in one of its own on that connection
     * (committed or rolled back here), and the connection is handed back in auto-commit mode.
     */
    public static <T> T inCallersTransaction(Connection connection, Work<T> work) {
        try {
            if (!connection.getAutoCommit()) {
                return work.run(connection);
            }
            try {
                return transaction(connection, work);
            } finally {
                connection.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw translate(e);
        }
    }

    /** Runs read-only {@code work} on a connection of {@code dataSource} in auto-commit mode. */
    public static <T> T read(DataSource dataSource, Work<T> work) {
        try (Connection connection = dataSource.getConnection()) {
            if (!connection.getAutoCommit()) {
                connection.setAutoCommit(true);
            }
            return work.run(connection);
        } catch (SQLException e) {
            throw translate(e);
        }
    }

    /** Runs {@code work} in a transaction of its own: commits if it returns, rolls back if it throws. */
    public static <T> T inTransaction(DataSource dataSource, Work<T> work) {
        try (Connection connection = dataSource.getConnection()) {
            return transaction(connection, work);
        } catch (SQLException e) {
            throw translate(e);
        }
    }

    private static <T> T transaction(Connection connection, Work<T> work) throws SQLException {
        connection.setAutoCommit(false);
        try {
            T result = work.run(connection);
            connection.commit();
            return result;
        } catch (SQLException | RuntimeException | Error e) {
            rollbackQuietly(connection, e);
            throw e;
        }
    }

    private static void rollbackQuietly(Connection connection, Throwable failure) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    /** The ledger exception for a database error, by SQLSTATE. */
    public static LedgerException translate(SQLException e) {
        String state = e.getSQLState();
        String message = String.valueOf(e.getMessage());
        if (state == null) {
            return new LedgerStorageException("database error: " + message, null, e);
        }
        return switch (state) {
            case "40001", "40P01", "55P03" ->
                new LedgerRetryableException("transaction aborted by a concurrent one (" + state + "): " + message, e);
            case "22003" -> new LedgerValidationException(Reason.AMOUNT_OVERFLOW, "amount out of range: " + message, e);
            case "LG002" -> new LedgerValidationException(Reason.UNKNOWN_ACCOUNT, message, e);
            case "LG003" -> new LedgerValidationException(Reason.CURRENCY_MISMATCH, message, e);
            case "LG004" -> new LedgerValidationException(Reason.TOO_FEW_POSTINGS, message, e);
            case "LG005" -> new LedgerValidationException(Reason.UNBALANCED, message, e);
            case "LG007" -> new LedgerValidationException(Reason.INVALID_ENTRY, message, e);
            default -> new LedgerStorageException("database error (" + state + "): " + message, state, e);
        };
    }

    static Array bigints(Connection c, long[] values) throws SQLException {
        Long[] boxed = new Long[values.length];
        for (int i = 0; i < values.length; i++) {
            boxed[i] = values[i];
        }
        return c.createArrayOf("int8", boxed);
    }

    static Array integers(Connection c, int[] values) throws SQLException {
        Integer[] boxed = new Integer[values.length];
        for (int i = 0; i < values.length; i++) {
            boxed[i] = values[i];
        }
        return c.createArrayOf("int4", boxed);
    }

    static Array texts(Connection c, String[] values) throws SQLException {
        return c.createArrayOf("text", values);
    }

    static void setNullableLong(PreparedStatement ps, int index, @Nullable Long value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.BIGINT);
        } else {
            ps.setLong(index, value);
        }
    }

    static void setNullableText(PreparedStatement ps, int index, @Nullable String value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.VARCHAR);
        } else {
            ps.setString(index, value);
        }
    }

    static @Nullable Long nullableLong(ResultSet rs, String column) throws SQLException {
        long value = rs.getLong(column);
        return rs.wasNull() ? null : value;
    }

    /** PostgreSQL keeps microseconds: the ledger's times are truncated to them before they are stored. */
    static Instant databasePrecision(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MICROS);
    }

    static void setInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
        ps.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
        return value.toInstant();
    }
}
