package dev.exactly.idempotency;

/**
 * The action ran, but by the time it finished its owner no longer held the record: the lease expired
 * and another owner took over (or an operator released it). The outcome was not recorded and must not
 * be reported to the client as a success; correctness then rests on the durable tier.
 */
public final class LeaseLostException extends IdempotencyException {
    private final OwnerToken owner;

    public LeaseLostException(OwnerToken owner) {
        super(
                "idempotency_lease_lost",
                "the idempotency lease expired before the request finished; its outcome was not recorded",
                null);
        this.owner = owner;
    }

    public OwnerToken owner() {
        return owner;
    }
}
