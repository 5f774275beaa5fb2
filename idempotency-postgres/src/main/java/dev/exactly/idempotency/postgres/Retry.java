package dev.exactly.idempotency.postgres;

import java.time.Instant;

/** What {@link AtomicPhases#retryLater} decided. */
public sealed interface Retry {

    /** Recovery takes the phase over again at {@code nextAttemptAt}; {@code attempt} attempts failed so far. */
    record Scheduled(int attempt, Instant nextAttemptAt) implements Retry {}

    /** That was the last attempt: the phase waits for an operator. */
    record DeadLettered(int attempts) implements Retry {}

    /** The caller no longer owned the phase; nothing was written (roll back). */
    record Lost() implements Retry {}
}
