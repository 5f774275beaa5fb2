package dev.exactly.ledger;

import org.jspecify.annotations.Nullable;

/**
 * Base of every refusal the ledger raises. Each carries a stable, machine-readable {@link #code()}
 * (e.g. {@code ledger_unbalanced}) that adapters can map to their protocol. SQL errors never leave the
 * ledger raw: they are translated into one of these. When a method that takes the caller's
 * {@link java.sql.Connection} throws, the caller must roll its transaction back. These exceptions
 * describe expected situations, so they carry no stack trace unless they wrap a cause.
 */
public abstract sealed class LedgerException extends RuntimeException
        permits LedgerValidationException,
                BalanceFloorException,
                DuplicateEntryException,
                LedgerConflictException,
                AccountConflictException,
                LedgerRetryableException,
                LedgerStorageException {

    private final String code;

    protected LedgerException(String code, String message, @Nullable Throwable cause) {
        super(message, cause, false, cause != null);
        this.code = code;
    }

    /** A stable machine-readable code, e.g. {@code ledger_unbalanced}. */
    public String code() {
        return code;
    }
}
