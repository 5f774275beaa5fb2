package dev.exactly.ledger;

import org.jspecify.annotations.Nullable;

/**
 * A pending entry and what became of it, from {@link Ledger#pendingHold}. The state is derived from the
 * entries (entries never change): a hold is open until a capture or a void linked to it commits.
 *
 * @param hold       the {@link EntryKind#PENDING} entry
 * @param resolution its {@link EntryKind#CAPTURE} or {@link EntryKind#VOID} entry, {@code null} while
 *                   the hold is open
 */
public record PendingHold(JournalEntry hold, @Nullable JournalEntry resolution) {

    /** Where a hold stands. */
    public enum State {
        /** Neither captured nor voided: its amounts are pending. */
        OPEN,
        /** Captured (in full or in part); what was not captured was released. */
        CAPTURED,
        /** Voided: everything it held was released. */
        VOIDED
    }

    /** Open, captured or voided. */
    public State state() {
        if (resolution == null) {
            return State.OPEN;
        }
        return resolution.kind() == EntryKind.CAPTURE ? State.CAPTURED : State.VOIDED;
    }
}
