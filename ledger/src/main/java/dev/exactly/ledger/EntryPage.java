package dev.exactly.ledger;

import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One page of {@link Ledger#entries}.
 *
 * @param entries   the entries in id order
 * @param nextQuery the query for the following page, {@code null} when this is the last one
 */
public record EntryPage(
        List<JournalEntry> entries, @Nullable EntryQuery nextQuery) {

    public EntryPage {
        entries = List.copyOf(entries);
    }

    /** The query for the next page, if there is one. */
    public Optional<EntryQuery> next() {
        return Optional.ofNullable(nextQuery);
    }
}
