package dev.exactly.idempotency.postgres;

/**
 * The application's half of recovery: given a phase recovery took over from an owner that died, froze or
 * gave up for now, carry on from its {@link Phase#checkpoint() checkpoint}. Finish it
 * ({@link AtomicPhases#finish}, in the transaction of the last writes) or schedule the next attempt
 * ({@link AtomicPhases#retryLater}); an exception counts as a failed attempt.
 */
@FunctionalInterface
public interface PhaseResumer {
    void resume(Phase phase) throws Exception;
}
