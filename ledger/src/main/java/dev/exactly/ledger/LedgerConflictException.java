package dev.exactly.ledger;

/**
 * The external reference of a write is taken by an entry that is not the one requested: its kind, its
 * link to an original entry, or its postings (accounts, sides, amounts, currencies) differ. A write that
 * matches the existing entry returns that entry instead, so a retried write is harmless; this refusal
 * means the reference was reused for a different business event. Nothing was written and the caller's
 * transaction is still usable.
 */
public final class LedgerConflictException extends LedgerException {

    private final String externalRef;
    private final JournalEntry existing;

    public LedgerConflictException(String externalRef, JournalEntry existing, String difference) {
        super(
                "ledger_reference_conflict",
                "external reference '" + externalRef + "' belongs to entry " + existing.id() + ", which differs: "
                        + difference,
                null);
        this.externalRef = externalRef;
        this.existing = existing;
    }

    /** The reference both writes carry. */
    public String externalRef() {
        return externalRef;
    }

    /** The id of the entry that holds the reference. */
    public long existingEntryId() {
        return existing.id();
    }

    /** The entry that holds the reference, as stored. */
    public JournalEntry existing() {
        return existing;
    }
}
