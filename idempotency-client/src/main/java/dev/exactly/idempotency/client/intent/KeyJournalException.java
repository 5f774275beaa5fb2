package dev.exactly.idempotency.client.intent;

/**
 * A journal could not be read or written. Nothing is sent when the key cannot be written first, and an
 * entry that cannot be read is never replaced by a new key (the intent may have been sent with the old
 * one): the caller must look at the journal.
 */
public final class KeyJournalException extends RuntimeException {

    public KeyJournalException(String message, Throwable cause) {
        super(message, cause);
    }

    public KeyJournalException(String message) {
        super(message);
    }
}
