package dev.exactly.payments.refund;

import dev.exactly.idempotency.postgres.Checkpoint;
import java.util.Locale;

/**
 * How far a refund got, recorded on its row and as its durable record's checkpoint in the same
 * transaction as the work it names. Whoever resumes the refund (a retry after the lease ended, the
 * recovery worker) continues from here.
 */
public enum RefundPoint {
    /** Phase 1 committed: the refund row, its reservation and the exact processor request exist. */
    REFUND_CREATED,
    /** An attempt reached the processor but its outcome is unknown (timeout, lost connection, 5xx). */
    PROCESSOR_CALLED,
    /** Phase 3 committed, or the refund was decided without the processor. */
    FINISHED;

    public String db() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The durable record's checkpoint of this point. */
    public Checkpoint checkpoint() {
        return Checkpoint.of(db());
    }

    public static RefundPoint fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
