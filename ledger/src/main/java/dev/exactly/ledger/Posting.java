package dev.exactly.ledger;

/**
 * One line of a stored {@link JournalEntry}.
 *
 * @param line      the 1-based position in the entry
 * @param accountId the account
 * @param side      debit or credit
 * @param amount    the positive amount, in the account's currency
 * @param pending   whether the line moves the account's pending amounts instead of its available balance:
 *                  the lines of a {@link EntryKind#PENDING} entry (held), and the lines of a
 *                  {@link EntryKind#CAPTURE} or {@link EntryKind#VOID} that release them
 */
public record Posting(int line, long accountId, Side side, Money amount, boolean pending) {

    /** A posted (not pending) line. */
    public Posting(int line, long accountId, Side side, Money amount) {
        this(line, accountId, side, amount, false);
    }
}
