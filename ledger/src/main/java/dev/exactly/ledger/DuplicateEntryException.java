package dev.exactly.ledger;

/**
 * The entry to reverse has been reversed already (by another entry than the one requested). A unique
 * index decides, so of two racing writers exactly one commits. The caller's transaction is still usable
 * (nothing was written), so it may read the existing entry, e.g. with
 * {@link Ledger#entry(java.sql.Connection, long)}. (A write whose external reference is taken is not a
 * duplicate: it returns the existing entry when it matches, or raises {@link LedgerConflictException}.)
 */
public final class DuplicateEntryException extends LedgerException {

    /** Which uniqueness rule was hit. */
    public enum Reason {
        /** The original entry already has a reversal. */
        ALREADY_REVERSED("ledger_already_reversed");

        private final String code;

        Reason(String code) {
            this.code = code;
        }

        /** The stable code of this reason. */
        public String code() {
            return code;
        }
    }

    private final Reason reason;
    private final long existingEntryId;

    public DuplicateEntryException(Reason reason, long existingEntryId, String message) {
        super(reason.code(), message, null);
        this.reason = reason;
        this.existingEntryId = existingEntryId;
    }

    /** Which uniqueness rule was hit. */
    public Reason reason() {
        return reason;
    }

    /** The id of the entry that got there first (the existing reversal). */
    public long existingEntryId() {
        return existingEntryId;
    }
}
