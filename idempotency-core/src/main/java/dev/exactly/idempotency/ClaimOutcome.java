package dev.exactly.idempotency;

/**
 * What one atomic {@code claim} found. A store never takes over a record whose fingerprint differs from
 * the presented one: it returns that record as {@link InFlight} or {@link Finished}, and the engine
 * reports the mismatch.
 */
public sealed interface ClaimOutcome {

    /** The record as it is after the claim (for {@link Claimed}) or as found. */
    IdempotencyRecord record();

    /**
     * The caller now owns the key and must finish it with its owner token.
     *
     * @param takeover whether an earlier owner's lease had expired and this claim replaced it
     */
    record Claimed(IdempotencyRecord record, boolean takeover) implements ClaimOutcome {
        public OwnerToken owner() {
            OwnerToken owner = record.owner();
            if (owner == null) {
                throw new IllegalStateException("a claimed record has an owner");
            }
            return owner;
        }
    }

    /** Another owner holds a live lease (or the fingerprint differs from a processing record). */
    record InFlight(IdempotencyRecord record) implements ClaimOutcome {}

    /** The key is finished: replay (or, if the fingerprint differs, a mismatch). */
    record Finished(IdempotencyRecord record) implements ClaimOutcome {}
}
