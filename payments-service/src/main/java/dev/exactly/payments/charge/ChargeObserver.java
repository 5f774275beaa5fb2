package dev.exactly.payments.charge;

/**
 * Watches a charge pass the steps after which a crash would leave it to recovery. The service runs with
 * {@link #NONE}; a test installs one (a bean of this type) that makes a chosen charge die at a chosen
 * step, as a crashed process would: what was committed stays, what was not rolls back, and recovery or a
 * retry must finish the charge. Whatever a method throws goes up from that step unhandled.
 */
public interface ChargeObserver {
    /** Observes nothing. */
    ChargeObserver NONE = new ChargeObserver() {};

    /** Phase 1 committed this new charge; the processor has not been called. */
    default void created(ChargeRow charge) {}

    /** The processor answered for this charge; phase 3 has not started. */
    default void processorAnswered(ChargeRow charge) {}

    /**
     * Phase 3 is about to send its writes (charge, journal entry, recorded answer, durable record) in one
     * round trip, with or before its commit: nothing of it is written yet, and dying here leaves nothing.
     */
    default void beforeCommit(ChargeRow charge) {}
}
