package dev.exactly.idempotency;

import java.time.Duration;

/**
 * Observes the engine for metrics and logs. Every method has a no-op default; implementations must be
 * fast and must not throw (exceptions are swallowed). Events carry the request (tag by
 * {@code scope().route()} and {@code scope().method()}, never by the raw key or tenant secret).
 */
public interface IdempotencyListener {

    IdempotencyListener NOOP = new IdempotencyListener() {};

    /** The request claimed its key; {@code takeover} when an expired lease was replaced. */
    default void onClaim(IdempotencyRequest request, boolean takeover) {}

    /** A finished record was replayed. */
    default void onReplay(IdempotencyRequest request, IdempotencyRecord record) {}

    /** The key exists with a different fingerprint. */
    default void onMismatch(IdempotencyRequest request, IdempotencyRecord record) {}

    /** The key was in flight and the request got a conflict ({@code waited}: after waiting). */
    default void onConflict(IdempotencyRequest request, boolean waited) {}

    /** A request waited for an in-flight duplicate; {@code result} is what ended the wait. */
    default void onWait(IdempotencyRequest request, Duration waited, WaitResult result) {}

    /** The action finished and its outcome was recorded; {@code held} is the lease hold time. */
    default void onRecorded(IdempotencyRequest request, RecordStatus status, Duration held) {}

    /** The key was released (action asked for it or threw). */
    default void onReleased(IdempotencyRequest request, Duration held) {}

    /** The owner lost its lease before recording (complete/renew refused). */
    default void onLeaseLost(IdempotencyRequest request, Duration held) {}

    /** The store failed; the engine failed closed. */
    default void onStoreError(IdempotencyRequest request, Throwable error) {}

    /** How a wait for an in-flight duplicate ended. */
    enum WaitResult {
        /** The other request finished; its outcome was replayed. */
        REPLAYED,
        /** The other request released (or lost) the key and this one claimed it. */
        CLAIMED,
        /** The wait bound passed; the request got a conflict. */
        TIMED_OUT
    }
}
