package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.StoreUnavailableException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.Set;

/** Classifies {@link SQLException}s. Every failure is reported as unavailable: the engine fails closed. */
final class SqlFailures {
    /** unique_violation, serialization_failure, deadlock_detected: another transaction owns the key. */
    private static final Set<String> CONFLICTS = Set.of("23505", "40001", "40P01");
    /** admin_shutdown, crash_shutdown, cannot_connect_now. */
    private static final Set<String> SHUTDOWN = Set.of("57P01", "57P02", "57P03");
    /** query_canceled: what the statement timeout raises. */
    private static final String CANCELED = "57014";

    private SqlFailures() {}

    /** Whether another transaction holds or just changed the key, so that running again decides. */
    static boolean isConflict(SQLException e) {
        return e.getSQLState() != null && CONFLICTS.contains(e.getSQLState());
    }

    /** Connection failures (class 08) and server shutdowns. */
    static boolean isConnectivity(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || SHUTDOWN.contains(state));
    }

    /** The statement timeout (or a cancel) ended the statement. */
    static boolean isTimeout(SQLException e) {
        return e instanceof SQLTimeoutException || CANCELED.equals(e.getSQLState());
    }

    static StoreUnavailableException unavailable(String operation, SQLException e) {
        String kind = isConnectivity(e)
                ? "could not reach PostgreSQL"
                : isTimeout(e) ? "PostgreSQL did not answer in time" : "PostgreSQL failed";
        return new StoreUnavailableException(
                "idempotency " + operation + ": " + kind + " (SQLState " + e.getSQLState() + "): " + e.getMessage(), e);
    }
}
