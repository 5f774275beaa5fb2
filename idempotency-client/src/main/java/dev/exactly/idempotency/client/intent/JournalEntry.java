package dev.exactly.idempotency.client.intent;

import dev.exactly.idempotency.client.IdempotencyKeys;
import dev.exactly.idempotency.client.IdempotentRequest;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a journal keeps of one intent: its key, the exact request (without credential headers), when it
 * was written, and, once a final answer came, when and which status.
 *
 * @param intent      the intent
 * @param key         its idempotency key
 * @param request     the request every attempt sends, credentials removed
 * @param createdAt   when the entry was written (before the first byte was sent)
 * @param finishedAt  when the final answer came, or {@code null} while the outcome is unknown
 * @param finalStatus the final answer's status, or 0 while pending
 */
public record JournalEntry(
        IntentId intent,
        String key,
        IdempotentRequest request,
        Instant createdAt,
        @Nullable Instant finishedAt,
        int finalStatus) {

    public JournalEntry {
        Objects.requireNonNull(intent, "intent");
        IdempotencyKeys.requireValid(key);
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(createdAt, "createdAt");
        request = request.withoutCredentials();
        if ((finishedAt == null) != (finalStatus == 0)) {
            throw new IllegalArgumentException("a finished entry has a final status and a time; a pending one neither");
        }
        if (finalStatus != 0 && (finalStatus < 100 || finalStatus > 599)) {
            throw new IllegalArgumentException("not an HTTP status: " + finalStatus);
        }
    }

    /** A new entry, not finished. */
    public static JournalEntry pending(IntentId intent, String key, IdempotentRequest request, Instant createdAt) {
        return new JournalEntry(intent, key, request, createdAt, null, 0);
    }

    /** Whether a final answer came. */
    public boolean finished() {
        return finishedAt != null;
    }

    /** When the final answer came, if it did. */
    public Optional<Instant> finishedTime() {
        return Optional.ofNullable(finishedAt);
    }

    /** This entry, finished at {@code at} with {@code status}. */
    public JournalEntry finish(int status, Instant at) {
        return new JournalEntry(intent, key, request, createdAt, Objects.requireNonNull(at, "at"), status);
    }
}
