package dev.exactly.idempotency.postgres;

/**
 * The claim of a new phase as one SQL statement ({@link AtomicPhases#beginningNew}), for a caller that
 * sends it with its own writes and the commit in one round trip. Once the statement succeeded, the caller
 * owns {@link #phase()}; when the key had a record, the statement failed with a unique violation and the
 * caller's transaction rolled back: nothing is owned.
 */
public interface PhaseClaim extends PhaseWrite {

    /** The phase the statement claims: fresh (no takeover, no earlier checkpoint, no attempts). */
    Phase phase();
}
