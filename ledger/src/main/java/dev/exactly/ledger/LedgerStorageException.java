package dev.exactly.ledger;

import org.jspecify.annotations.Nullable;

/** The database failed or refused in a way that is not the caller's input (connection lost, guard hit). */
public final class LedgerStorageException extends LedgerException {

    private final @Nullable String sqlState;

    public LedgerStorageException(String message, @Nullable String sqlState, @Nullable Throwable cause) {
        super("ledger_storage_error", message, cause);
        this.sqlState = sqlState;
    }

    /** The SQLSTATE reported by the database, if any. */
    public @Nullable String sqlState() {
        return sqlState;
    }
}
