package dev.exactly.idempotency;

/** The work the engine runs at most once per scope. */
@FunctionalInterface
public interface GuardedAction {

    /**
     * Runs the work under {@code lease}. Throwing releases the key (the engine assumes no side effect
     * happened; an action with side effects must return an {@link Outcome} instead, or rely on a
     * durable tier).
     */
    Outcome run(Lease lease) throws Exception;
}
