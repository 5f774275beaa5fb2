package dev.exactly.payments.api;

import dev.exactly.ledger.JournalEntry;
import dev.exactly.ledger.Money;
import dev.exactly.ledger.Posting;
import dev.exactly.ledger.TrialBalance;
import dev.exactly.payments.ledger.CustomerBalance;
import dev.exactly.payments.ledger.TenantAccounts;
import dev.exactly.payments.ledger.TenantEntries;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The tenant's ledger views as the API shows them: amounts in minor units, currencies in lower case. */
final class LedgerJson {
    private LedgerJson() {}

    static Map<String, Object> balance(CustomerBalance balance) {
        List<Map<String, Object>> available = new ArrayList<>();
        List<Map<String, Object>> pending = new ArrayList<>();
        for (CustomerBalance.Balance b : balance.balances()) {
            available.add(balanceLine(b.amount(), b.account()));
            pending.add(balanceLine(b.pending(), b.account()));
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "balance");
        json.put("customer", balance.customer());
        json.put("available", available);
        json.put("pending", pending);
        return json;
    }

    private static Map<String, Object> balanceLine(Money amount, String account) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("currency", currency(amount));
        line.put("amount", amount.minorUnits());
        line.put("account", account);
        return line;
    }

    static Map<String, Object> entries(TenantEntries page) {
        List<Map<String, Object>> data = new ArrayList<>();
        for (JournalEntry entry : page.entries()) {
            data.add(entry(entry, page.accountCodes()));
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "list");
        json.put("account", page.account());
        json.put("data", data);
        json.put("has_more", page.nextAfter() != null);
        json.put("next_after", page.nextAfter());
        return json;
    }

    private static Map<String, Object> entry(JournalEntry entry, Map<Long, String> codes) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("id", entry.id());
        json.put("object", "journal_entry");
        json.put("kind", entry.kind().dbValue());
        json.put("original_entry", entry.originalEntryId());
        json.put("reference", entry.externalRef());
        json.put("description", entry.description());
        json.put("posted_at", entry.postedAt().toString());
        List<Map<String, Object>> postings = new ArrayList<>();
        for (Posting p : entry.postings()) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("account", codes.getOrDefault(p.accountId(), "?"));
            line.put("side", p.side().dbValue());
            line.put("amount", p.amount().minorUnits());
            line.put("currency", currency(p.amount()));
            postings.add(line);
        }
        json.put("postings", postings);
        return json;
    }

    static Map<String, Object> trialBalance(TrialBalance tb, String tenant) {
        List<Map<String, Object>> lines = new ArrayList<>();
        for (TrialBalance.Line l : tb.lines()) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("account", TenantAccounts.publicCode(l.account().code(), tenant));
            line.put("type", l.account().type().dbValue());
            line.put("currency", l.account().currency().code().toLowerCase(Locale.ROOT));
            line.put("debit", l.debit().minorUnits());
            line.put("credit", l.credit().minorUnits());
            line.put("pending_debit", l.pendingDebit().minorUnits());
            line.put("pending_credit", l.pendingCredit().minorUnits());
            lines.add(line);
        }
        List<Map<String, Object>> totals = new ArrayList<>();
        tb.totals().forEach((currency, t) -> {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("currency", currency.toLowerCase(Locale.ROOT));
            line.put("debits", t.debits().minorUnits());
            line.put("credits", t.credits().minorUnits());
            line.put("pending_debits", t.pendingDebits().minorUnits());
            line.put("pending_credits", t.pendingCredits().minorUnits());
            line.put("balanced", t.isBalanced());
            totals.add(line);
        });
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "trial_balance");
        json.put("balanced", tb.isBalanced());
        json.put("totals", totals);
        json.put("lines", lines);
        return json;
    }

    private static String currency(Money amount) {
        return amount.currency().code().toLowerCase(Locale.ROOT);
    }
}
