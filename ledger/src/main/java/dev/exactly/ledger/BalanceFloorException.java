package dev.exactly.ledger;

/**
 * Posting the entry would take an account's balance below its floor (for instance a customer balance
 * below zero). The floor bounds the available balance less what open holds may take from it
 * ({@link AccountBalance#unreserved()}), so a hold reserves: a second hold, or a posting, that would
 * spend what is held is refused too. The check ran under the account's row lock in the writing
 * transaction; nothing was committed, and the caller must roll its transaction back.
 */
public final class BalanceFloorException extends LedgerException {

    private final long accountId;
    private final Money floor;
    private final Money balance;
    private final Money change;

    public BalanceFloorException(long accountId, Money floor, Money balance, Money change) {
        super(
                "ledger_balance_floor",
                "account " + accountId + " would go below its floor " + floor + ": balance " + balance + ", change "
                        + change,
                null);
        this.accountId = accountId;
        this.floor = floor;
        this.balance = balance;
        this.change = change;
    }

    /** The account whose floor would be crossed. */
    public long accountId() {
        return accountId;
    }

    /** The account's floor (a lower bound on its normal-side balance). */
    public Money floor() {
        return floor;
    }

    /**
     * The account's balance less its held decreases when the entry was refused (read under the row
     * lock); without open holds, its balance.
     */
    public Money balance() {
        return balance;
    }

    /** The change the entry would have made to that amount (negative). */
    public Money change() {
        return change;
    }
}
