package dev.exactly.payments.charge;

import dev.exactly.idempotency.postgres.Checkpoint;
import java.util.Locale;

/**
 * How far a charge got, recorded in the same transaction as the work it names (on the charge row, and
 * mirrored on the durable idempotency record). Whoever resumes a charge (the client's retry after the
 * lease expired, the recovery worker, an operator) continues from here.
 */
public enum RecoveryPoint {
    /** Phase 1 committed: the charge row and the exact processor request exist; the processor may or may not have been called. */
    CHARGE_CREATED,
    /** An attempt reached the processor but its outcome is unknown (timeout, lost connection, 5xx). */
    PROCESSOR_CALLED,
    /** Phase 3 committed: final status, journal entry, stored response, idempotency record finished. */
    FINISHED;

    public String db() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The durable record's checkpoint of this point. */
    public Checkpoint checkpoint() {
        return Checkpoint.of(db());
    }

    public static RecoveryPoint fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
