package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.ScopeKey;
import java.time.Instant;

/**
 * Observes recovery, for metrics and logs. No-op defaults; implementations must be fast and must not
 * throw (exceptions are swallowed).
 */
public interface PhaseListener {
    PhaseListener NOOP = new PhaseListener() {};

    /** Recovery took a phase over from an owner whose lease ran out. */
    default void onRecoveryTakeover(PhaseRecord record) {}

    /** A failed attempt; the next one is due at {@code nextAttemptAt}. */
    default void onRetryScheduled(ScopeKey key, int attempt, Instant nextAttemptAt, String error) {}

    /** The last attempt failed: the phase waits for an operator. */
    default void onDeadLettered(ScopeKey key, int attempts, String error) {}

    /** An operator took a phase over by hand. */
    default void onOperatorTakeover(PhaseRecord record) {}
}
