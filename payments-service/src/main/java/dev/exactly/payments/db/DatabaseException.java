package dev.exactly.payments.db;

import java.sql.SQLException;

/** A database statement failed. The API answers 503: the request's outcome was not changed by it. */
public final class DatabaseException extends RuntimeException {

    public DatabaseException(SQLException cause) {
        super(cause.getMessage(), cause);
    }

    /** The SQLSTATE of the failure, e.g. {@code 23505}, or the empty string. */
    public String sqlState() {
        String state = ((SQLException) getCause()).getSQLState();
        return state == null ? "" : state;
    }

    /** Whether another transaction owns a row this one wanted (unique violation, serialization, deadlock). */
    public boolean isConflict() {
        return switch (sqlState()) {
            case "23505", "40001", "40P01" -> true;
            default -> false;
        };
    }
}
