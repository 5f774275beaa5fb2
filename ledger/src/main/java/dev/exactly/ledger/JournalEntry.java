package dev.exactly.ledger;

import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A stored, immutable journal entry: at least two postings whose debits equal their credits in every
 * currency.
 *
 * @param id              the ledger-assigned id (ascending in allocation order, not commit order)
 * @param kind            standard, reversal, refund or adjustment
 * @param originalEntryId the entry this one reverses, refunds or adjusts; {@code null} if none
 * @param externalRef     the unique business reference, {@code null} if none was given
 * @param description     free text
 * @param postedAt        the ledger time of the entry (point-in-time balances use it)
 * @param postings        the postings in line order
 */
public record JournalEntry(
        long id,
        EntryKind kind,
        @Nullable Long originalEntryId,
        @Nullable String externalRef,
        String description,
        Instant postedAt,
        List<Posting> postings) {

    public JournalEntry {
        postings = List.copyOf(postings);
    }
}
