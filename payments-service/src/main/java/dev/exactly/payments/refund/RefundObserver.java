package dev.exactly.payments.refund;

/**
 * Watches a refund pass the steps after which a crash would leave it to recovery. The service runs with
 * {@link #NONE}; a test installs one (a bean of this type) that makes a chosen refund die at a chosen
 * step, as a crashed process would. Whatever a method throws goes up from that step unhandled.
 */
public interface RefundObserver {
    /** Observes nothing. */
    RefundObserver NONE = new RefundObserver() {};

    /** Phase 1 committed this new refund; the processor has not been called. */
    default void created(RefundRow refund) {}

    /** The processor answered for this refund; phase 3 has not started. */
    default void processorAnswered(RefundRow refund) {}

    /** Phase 3 wrote everything (refund, journal entry, recorded answer, durable record) and has not committed. */
    default void beforeCommit(RefundRow refund) {}
}
