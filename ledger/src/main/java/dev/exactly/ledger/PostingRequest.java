package dev.exactly.ledger;

import dev.exactly.ledger.LedgerValidationException.Reason;

/**
 * One line of an {@link EntryRequest}: debit or credit a positive amount to an account.
 *
 * @param accountId the account
 * @param side      debit or credit
 * @param amount    a positive amount in the account's currency
 */
public record PostingRequest(long accountId, Side side, Money amount) {

    public PostingRequest {
        if (!amount.isPositive()) {
            throw new LedgerValidationException(
                    Reason.INVALID_AMOUNT, "a posting amount must be positive, not " + amount);
        }
    }

    /** Debit {@code amount} to {@code accountId}. */
    public static PostingRequest debit(long accountId, Money amount) {
        return new PostingRequest(accountId, Side.DEBIT, amount);
    }

    /** Credit {@code amount} to {@code accountId}. */
    public static PostingRequest credit(long accountId, Money amount) {
        return new PostingRequest(accountId, Side.CREDIT, amount);
    }
}
