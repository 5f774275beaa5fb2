package dev.exactly.ledger;

/**
 * The entry to reverse has been reversed already, or the pending entry to capture or void has been
 * captured or voided already, by another entry than the one requested. A unique index decides, so of two
 * racing writers exactly one commits. The caller's transaction is still usable
 * (nothing was written), so it may read the existing entry, e.g. with
 * {@link Ledger#entry(java.sql.Connection, long)}. (A write whose external reference is taken is not a
 * duplicate: it returns the existing entry when it matches, or raises {@link LedgerConflictException}.)
 */
public final class DuplicateEntryException extends LedgerException {

    /** Which uniqueness rule was hit. */
    public enum Reason {
        /** The original entry already has a reversal. */
        ALREADY_REVERSED("ledger_already_reversed"),
        /** The pending entry is captured already (so it can be neither captured again nor voided). */
        ALREADY_CAPTURED("ledger_already_captured"),
        /** The pending entry is voided already (so it can be neither captured nor voided again). */
        ALREADY_VOIDED("ledger_already_voided");

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

    /** The id of the entry that got there first (the existing reversal, capture or void). */
    public long existingEntryId() {
        return existingEntryId;
    }
}
