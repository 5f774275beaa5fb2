package dev.exactly.payments.ledger;

import dev.exactly.ledger.Account;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.EntryPage;
import dev.exactly.ledger.EntryQuery;
import dev.exactly.ledger.JournalEntry;
import dev.exactly.ledger.Ledger;
import dev.exactly.ledger.Money;
import dev.exactly.ledger.Posting;
import dev.exactly.ledger.TrialBalance;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The tenant's read models of the ledger: customer balances, pages of journal entries, and the trial
 * balance of the tenant's accounts (every entry of a tenant touches only its own accounts, so that trial
 * balance must balance by itself). Account codes are shown without the tenant.
 */
public final class LedgerQueries {
    private final Ledger ledger;
    private final TenantAccounts accounts;

    public LedgerQueries(Ledger ledger, TenantAccounts accounts) {
        this.ledger = ledger;
        this.accounts = accounts;
    }

    /** The customer's balances in the given currencies (those with an account). */
    public Map<String, Object> customerBalance(String tenant, String customer, List<String> currencies) {
        List<Map<String, Object>> balances = new ArrayList<>();
        for (String code : currencies) {
            Currency currency = Currency.of(code);
            Optional<Account> account = accounts.find(TenantAccounts.customerCode(tenant, customer, currency));
            if (account.isEmpty()) {
                continue;
            }
            Money balance = ledger.balance(account.get().id());
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("currency", currency.code().toLowerCase(Locale.ROOT));
            line.put("amount", balance.minorUnits());
            line.put("account", TenantAccounts.publicCode(account.get().code(), tenant));
            balances.add(line);
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "balance");
        json.put("customer", customer);
        json.put("available", balances);
        return json;
    }

    /**
     * A page of the entries touching one of the tenant's accounts (the clearing account of a currency
     * sees every entry of the tenant in that currency).
     *
     * @return empty when the account does not exist
     */
    public Optional<Map<String, Object>> entries(String tenant, String publicAccount, long afterId, int limit) {
        Optional<Account> account = TenantAccounts.internalCode(publicAccount, tenant).flatMap(accounts::find);
        if (account.isEmpty()) {
            return Optional.empty();
        }
        EntryPage page = ledger.entries(new EntryQuery(afterId, limit, account.get().id()));
        Map<Long, String> codes = new java.util.HashMap<>();
        List<Map<String, Object>> data = new ArrayList<>();
        for (JournalEntry entry : page.entries()) {
            data.add(entry(entry, tenant, codes));
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "list");
        json.put("account", publicAccount);
        json.put("data", data);
        json.put("has_more", page.nextQuery() != null);
        json.put("next_after", page.nextQuery() == null ? null : page.nextQuery().afterId());
        return Optional.of(json);
    }

    private Map<String, Object> entry(JournalEntry entry, String tenant, Map<Long, String> codes) {
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
            String code = codes.computeIfAbsent(p.accountId(),
                    id -> ledger.account(id).map(a -> TenantAccounts.publicCode(a.code(), tenant)).orElse("?"));
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("account", code);
            line.put("side", p.side().dbValue());
            line.put("amount", p.amount().minorUnits());
            line.put("currency", p.amount().currency().code().toLowerCase(Locale.ROOT));
            postings.add(line);
        }
        json.put("postings", postings);
        return json;
    }

    /** The trial balance of the tenant's accounts. */
    public Map<String, Object> trialBalance(String tenant) {
        TrialBalance all = ledger.trialBalance();
        List<TrialBalance.Line> mine = all.lines().stream()
                .filter(l -> TenantAccounts.belongsTo(l.account().code(), tenant))
                .toList();
        TrialBalance tb = TrialBalance.of(null, mine);
        List<Map<String, Object>> lines = new ArrayList<>();
        for (TrialBalance.Line l : tb.lines()) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("account", TenantAccounts.publicCode(l.account().code(), tenant));
            line.put("type", l.account().type().dbValue());
            line.put("currency", l.account().currency().code().toLowerCase(Locale.ROOT));
            line.put("debit", l.debit().minorUnits());
            line.put("credit", l.credit().minorUnits());
            lines.add(line);
        }
        List<Map<String, Object>> totals = new ArrayList<>();
        tb.totals().forEach((currency, t) -> {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("currency", currency.toLowerCase(Locale.ROOT));
            line.put("debits", t.debits().minorUnits());
            line.put("credits", t.credits().minorUnits());
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
}
