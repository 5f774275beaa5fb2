package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.StoredResponse;
import java.time.Duration;
import java.time.Instant;

/** What {@link AtomicPhases#begin} found for a request, inside the caller's transaction. */
public sealed interface PhaseStart {

    /** The caller owns the phase now: go on, committing checkpoints with the writes they stand for. */
    record Owned(Phase phase) implements PhaseStart {}

    /** The key is finished: answer with the recorded response (roll back or commit nothing else). */
    record Replay(StoredResponse response, Instant expiresAt) implements PhaseStart {}

    /** Another owner is working on the key: come back after {@code retryAfter}. */
    record InFlight(Duration retryAfter) implements PhaseStart {}

    /** Recovery gave up on the key; an operator must resolve it ({@link AtomicPhases#takeOver}). */
    record DeadLettered(PhaseRecord record) implements PhaseStart {}

    /** The key was used for a different request: this one must not run, nor replay another's answer. */
    record KeyReused() implements PhaseStart {}
}
