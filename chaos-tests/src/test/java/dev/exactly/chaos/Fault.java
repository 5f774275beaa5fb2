package dev.exactly.chaos;

/**
 * A fault injected while a load runs. {@link #inject} waits (bounded) for its window, e.g. until requests
 * are in flight at the victim, injects the fault, heals it, and records what it saw at that moment;
 * {@link #evidence} is asked after the drain whether the fault really hit its window, from the service's
 * state in PostgreSQL and the processor's counters, not from the test's intentions.
 */
interface Fault {

    /** A short name for reports. */
    String name();

    /** Waits for the window, injects the fault and heals it; returns before the load finishes. */
    void inject(Topology topology, LoadGenerator.Run run) throws Exception;

    /** After the drain: whether the fault hit its window, and the figures that prove it. */
    Evidence evidence(Topology topology, LoadGenerator.Run run);

    /**
     * What a fault did.
     *
     * @param hit     whether it really hit its window (a run that proves nothing must not pass)
     * @param figures what was counted, for the report
     */
    record Evidence(boolean hit, String figures) {}
}
