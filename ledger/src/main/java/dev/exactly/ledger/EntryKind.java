package dev.exactly.ledger;

import java.util.Locale;

/** What an entry is, and whether it must link to an original entry. */
public enum EntryKind {
    /** An ordinary entry (a charge, a payout, ...); links to nothing. */
    STANDARD(false, false),
    /** The exact mirror of an original entry, made by {@link Ledger#reverse}; at most one per original. */
    REVERSAL(true, true),
    /** A (possibly partial) refund of an original entry; several may link to one original. */
    REFUND(true, true),
    /** A correction; may link to the entry it corrects. */
    ADJUSTMENT(false, true),
    /**
     * A hold, made by {@link Ledger#hold}: its postings are pending, reserving amounts without changing
     * the available balances, until a {@link #CAPTURE} or a {@link #VOID} resolves it (at most one).
     */
    PENDING(false, false),
    /**
     * Resolves a {@link #PENDING} entry, made by {@link Ledger#capture}: releases everything it holds and
     * posts what was captured (all of it, or part of it).
     */
    CAPTURE(true, true),
    /** Resolves a {@link #PENDING} entry, made by {@link Ledger#voidHold}: releases everything it holds. */
    VOID(true, true);

    private final boolean requiresOriginal;
    private final boolean allowsOriginal;

    EntryKind(boolean requiresOriginal, boolean allowsOriginal) {
        this.requiresOriginal = requiresOriginal;
        this.allowsOriginal = allowsOriginal;
    }

    /** Whether an entry of this kind must name an original entry. */
    public boolean requiresOriginal() {
        return requiresOriginal;
    }

    /** Whether an entry of this kind may name an original entry. */
    public boolean allowsOriginal() {
        return allowsOriginal;
    }

    /** The value stored in the database ({@code standard}, ...). */
    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind stored as {@code value} in the database. */
    public static EntryKind fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
