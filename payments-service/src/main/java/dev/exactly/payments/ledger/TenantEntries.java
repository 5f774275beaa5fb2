package dev.exactly.payments.ledger;

import dev.exactly.ledger.JournalEntry;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A page of the journal entries touching one of the tenant's accounts.
 *
 * @param account      the account as the tenant named it
 * @param entries      oldest first
 * @param accountCodes every account the entries' postings touch, as the tenant names it, by id
 * @param nextAfter    the id after which the next page starts, or {@code null} on the last page
 */
public record TenantEntries(
        String account,
        List<JournalEntry> entries,
        Map<Long, String> accountCodes,
        @Nullable Long nextAfter) {
    public TenantEntries {
        entries = List.copyOf(entries);
        accountCodes = Map.copyOf(accountCodes);
    }
}
