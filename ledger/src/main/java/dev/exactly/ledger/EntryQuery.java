package dev.exactly.ledger;

import dev.exactly.ledger.LedgerValidationException.Reason;
import org.jspecify.annotations.Nullable;

/**
 * A page request for {@link Ledger#entries}: entries with an id greater than {@code afterId}, in id
 * order, at most {@code limit}, optionally only those touching one account (keyset pagination, so a
 * page costs the same however deep it is). Ids are allocated before commit, so an entry committing late
 * can appear behind a page already read: use it to browse, not as a change feed.
 *
 * @param afterId   return entries with a greater id; 0 for the first page
 * @param limit     page size, 1 to {@value #MAX_LIMIT}
 * @param accountId only entries with a posting on this account; {@code null} for all entries
 */
public record EntryQuery(long afterId, int limit, @Nullable Long accountId) {

    /** The largest page. */
    public static final int MAX_LIMIT = 1000;

    public EntryQuery {
        if (afterId < 0) {
            throw new LedgerValidationException(Reason.INVALID_ENTRY, "afterId must not be negative");
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new LedgerValidationException(Reason.INVALID_ENTRY, "limit must be between 1 and " + MAX_LIMIT);
        }
    }

    /** The first page of all entries. */
    public static EntryQuery first(int limit) {
        return new EntryQuery(0, limit, null);
    }

    /** The same query restricted to entries touching {@code accountId}. */
    public EntryQuery forAccount(long accountId) {
        return new EntryQuery(afterId, limit, accountId);
    }

    /** The same query starting after entry {@code id}. */
    public EntryQuery after(long id) {
        return new EntryQuery(id, limit, accountId);
    }
}
