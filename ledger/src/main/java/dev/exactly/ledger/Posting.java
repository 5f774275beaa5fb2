package dev.exactly.ledger;

/**
 * One line of a stored {@link JournalEntry}.
 *
 * @param line      the 1-based position in the entry
 * @param accountId the account
 * @param side      debit or credit
 * @param amount    the positive amount, in the account's currency
 */
public record Posting(int line, long accountId, Side side, Money amount) {}
