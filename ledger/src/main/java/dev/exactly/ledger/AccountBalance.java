package dev.exactly.ledger;

/**
 * An account's balances, all on its normal side (a credit-normal customer account owed 10.00 shows
 * {@code +10.00}), from {@link Ledger#balances}.
 *
 * @param available       the balance of posted entries; holds don't change it (this is
 *                        {@link Ledger#balance(long)})
 * @param pendingIncrease what open holds would add to it once captured in full (held on the normal side)
 * @param pendingDecrease what open holds would take from it once captured in full (held on the other
 *                        side); the account's floor applies to {@link #unreserved()}, so a hold reserves
 */
public record AccountBalance(Money available, Money pendingIncrease, Money pendingDecrease) {

    /** The net pending amount: {@code pendingIncrease - pendingDecrease}. */
    public Money pending() {
        return pendingIncrease.minus(pendingDecrease);
    }

    /** The available balance less what open holds may take from it: what the floor is checked against. */
    public Money unreserved() {
        return available.minus(pendingDecrease);
    }
}
