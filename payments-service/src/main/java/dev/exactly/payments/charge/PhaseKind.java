package dev.exactly.payments.charge;

import dev.exactly.idempotency.postgres.Phase;

/**
 * A kind of operation besides charges that runs in atomic phases (refunds), so that the
 * {@link RecoveryWorker} can resume its records: the worker looks a record's scope up among the charges
 * first, then asks each kind in turn.
 */
public interface PhaseKind {

    /**
     * Resumes the operation whose durable record recovery took over, if the record's scope is one of this
     * kind's.
     *
     * @return false when no operation of this kind has the phase's scope (nothing was done)
     */
    boolean resume(Phase phase);
}
