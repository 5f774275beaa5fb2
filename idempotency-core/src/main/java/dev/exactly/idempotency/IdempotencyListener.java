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

    /** The owner lost its lease before recording: the store refused its final write (complete or release). */
    default void onLeaseLost(IdempotencyRequest request, Duration held) {}

    /**
     * One renewal of a running action's lease, by the keep-alive or by the action
     * ({@link Lease#renew}): {@code RENEWED}, or a failed renewal ({@code LOST}: the store refused it;
     * {@code FAILED}: the store did not answer), or {@code MAX_HOLD} once, when the keep-alive stopped at
     * its bound. Called on the keep-alive's thread.
     */
    default void onRenewal(IdempotencyRequest request, RenewalResult result) {}

    /** The store failed; the engine failed closed. */
    default void onStoreError(IdempotencyRequest request, Throwable error) {}

    /**
     * A write whose answer the store did not give is being finished in the background, fenced by the
     * owner token: {@code SCHEDULED} once, then {@code APPLIED}, {@code NOT_NEEDED} or {@code ABANDONED}.
     */
    default void onRepair(IdempotencyRequest request, Repair repair, RepairResult result) {}

    /** Which write is repaired. */
    enum Repair {
        /** A claim timed out: release the key in case the store took it, so that it is not held for the lease. */
        UNDO_CLAIM,
        /** The action ran but its outcome could not be recorded: record it. */
        RECORD,
        /** The action released its key (or threw) but the release failed: release it. */
        RELEASE
    }

    /** How a repair went. */
    enum RepairResult {
        /** The write will be retried until the store answers. */
        SCHEDULED,
        /** The store applied the write. */
        APPLIED,
        /** The store answered that this owner holds nothing (the claim never landed, or another owner took over). */
        NOT_NEEDED,
        /** The store did not answer within the repair window (or too many repairs were pending). */
        ABANDONED
    }

    /** How a renewal of a running action's lease went. */
    enum RenewalResult {
        /** The store extended the lease. */
        RENEWED,
        /**
         * The store refused: this owner no longer holds the key (another request took it over after the
         * lease ran out, or the record is gone). The keep-alive stops; the action's outcome will not be
         * recorded.
         */
        LOST,
        /** The store did not answer; the keep-alive tries again soon, until the store answers. */
        FAILED,
        /** The keep-alive reached its max hold and stopped renewing; the lease now runs out on its own. */
        MAX_HOLD
    }

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
