package dev.exactly.idempotency.client.intent;

import java.time.Duration;
import java.time.Instant;

/**
 * A pending intent older than the retention, which is not sent again: servers keep a key for about that long
 * after its request finished (24 h by default), so a server may have run the request and forgotten the key,
 * and a resend under it would run it a second time. Its outcome is unknown; find it out by other means (the
 * server's own records of the operation), then mark the entry with {@code journal().finish(...)}.
 */
public final class IntentExpiredException extends RuntimeException {
    private final IntentId intent;
    private final String key;
    private final Instant createdAt;

    IntentExpiredException(JournalEntry entry, Duration retention) {
        super(
                "intent " + entry.intent() + " has been pending since " + entry.createdAt() + ", longer than the "
                        + retention
                        + " that servers keep keys: its request may have run and its key been forgotten, so it is "
                        + "not sent again under key " + entry.key()
                        + "; find out its outcome from the server's records, then "
                        + "mark the entry finished (journal().finish)",
                null,
                false,
                false);
        this.intent = entry.intent();
        this.key = entry.key();
        this.createdAt = entry.createdAt();
    }

    public IntentId intent() {
        return intent;
    }

    /** The key the intent was sent with. */
    public String key() {
        return key;
    }

    /** When the intent was first journaled. */
    public Instant createdAt() {
        return createdAt;
    }
}
