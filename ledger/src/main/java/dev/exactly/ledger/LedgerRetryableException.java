package dev.exactly.ledger;

/**
 * The database aborted the transaction because of a concurrent one (serialization failure, deadlock,
 * lock timeout). Roll back and run the whole transaction again. With one entry per transaction at READ
 * COMMITTED the ledger takes its row locks in a fixed order, so this does not happen; it can with
 * stricter isolation or several entries in one transaction.
 */
public final class LedgerRetryableException extends LedgerException {

    public LedgerRetryableException(String message, Throwable cause) {
        super("ledger_retry", message, cause);
    }
}
