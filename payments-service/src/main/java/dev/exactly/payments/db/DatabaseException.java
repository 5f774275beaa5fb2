package dev.exactly.payments.db;

import java.sql.SQLException;

/**
 * A database call failed. Only a failure to get a connection at all ({@link #beforeAnyStatement()}) says
 * that nothing was done; a failure during a transaction or at its commit may hide a commit that happened.
 */
public final class DatabaseException extends RuntimeException {
    private final boolean beforeAnyStatement;

    public DatabaseException(SQLException cause) {
        this(cause, false);
    }

    private DatabaseException(SQLException cause, boolean beforeAnyStatement) {
        super(cause.getMessage(), cause);
        this.beforeAnyStatement = beforeAnyStatement;
    }

    /** No connection could be had: no statement was sent. */
    public static DatabaseException unreachable(SQLException cause) {
        return new DatabaseException(cause, true);
    }

    /** Whether the failure came before any statement was sent (so nothing can have been written). */
    public boolean beforeAnyStatement() {
        return beforeAnyStatement;
    }

    /** The SQLSTATE of the failure, e.g. {@code 23505}, or the empty string. */
    public String sqlState() {
        String state = getCause() instanceof SQLException failure ? failure.getSQLState() : null;
        return state == null ? "" : state;
    }

    /**
     * Whether the server itself refused a statement of the transaction, or its commit, so that nothing of
     * the transaction committed: an error it reported (an SQLSTATE outside class 08, connection exceptions,
     * and 57P, the server going away), not a lost connection, which may hide a commit.
     */
    public boolean rolledBack() {
        String state = sqlState();
        return !beforeAnyStatement && !state.isEmpty() && !state.startsWith("08") && !state.startsWith("57P");
    }

    /** Whether a unique constraint refused a write (SQLSTATE 23505). */
    public boolean isUniqueViolation() {
        return sqlState().equals("23505");
    }

    /**
     * Whether a guard refused to let a transaction commit (SQLSTATE {@code EXP01}, {@code payments_require}
     * of migration V7): something the commit depended on did not hold; the transaction is aborted.
     */
    public boolean isGuardRefusal() {
        return sqlState().equals("EXP01");
    }

    /** Whether another transaction owns a row this one wanted (unique violation, serialization, deadlock). */
    public boolean isConflict() {
        return switch (sqlState()) {
            case "23505", "40001", "40P01" -> true;
            default -> false;
        };
    }
}
