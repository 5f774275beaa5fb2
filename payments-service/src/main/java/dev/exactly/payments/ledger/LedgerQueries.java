package dev.exactly.payments.ledger;

import dev.exactly.ledger.Account;
import dev.exactly.ledger.AccountBalance;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.EntryPage;
import dev.exactly.ledger.EntryQuery;
import dev.exactly.ledger.JournalEntry;
import dev.exactly.ledger.Ledger;
import dev.exactly.ledger.Posting;
import dev.exactly.ledger.TrialBalance;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The tenant's views of the ledger: customer balances, pages of journal entries, and the trial balance of
 * the tenant's accounts (every entry of a tenant touches only its own accounts, so that trial balance must
 * balance by itself). Account codes are given as the tenant names them, without the tenant.
 */
public final class LedgerQueries {
    private final Ledger ledger;
    private final TenantAccounts accounts;

    public LedgerQueries(Ledger ledger, TenantAccounts accounts) {
        this.ledger = ledger;
        this.accounts = accounts;
    }

    /** The customer's balances in the given currencies (those with an account). */
    public CustomerBalance customerBalance(String tenant, String customer, List<String> currencies) {
        List<CustomerBalance.Balance> balances = new ArrayList<>();
        for (String code : currencies) {
            Currency currency = Currency.of(code);
            Optional<Account> account = accounts.find(TenantAccounts.customerCode(tenant, customer, currency));
            account.ifPresent(a -> {
                AccountBalance b = ledger.balances(a.id());
                balances.add(new CustomerBalance.Balance(
                        TenantAccounts.publicCode(a.code(), tenant), b.available(), b.pending()));
            });
        }
        return new CustomerBalance(customer, balances);
    }

    /**
     * A page of the entries touching one of the tenant's accounts (the clearing account of a currency
     * sees every entry of the tenant in that currency).
     *
     * @return empty when the account does not exist
     */
    public Optional<TenantEntries> entries(String tenant, String publicAccount, long afterId, int limit) {
        Optional<Account> account =
                TenantAccounts.internalCode(publicAccount, tenant).flatMap(accounts::find);
        if (account.isEmpty()) {
            return Optional.empty();
        }
        EntryPage page =
                ledger.entries(new EntryQuery(afterId, limit, account.get().id()));
        Map<Long, String> codes = new HashMap<>();
        for (JournalEntry entry : page.entries()) {
            for (Posting p : entry.postings()) {
                codes.computeIfAbsent(
                        p.accountId(),
                        id -> ledger.account(id)
                                .map(a -> TenantAccounts.publicCode(a.code(), tenant))
                                .orElse("?"));
            }
        }
        EntryQuery next = page.nextQuery();
        return Optional.of(
                new TenantEntries(publicAccount, page.entries(), codes, next == null ? null : next.afterId()));
    }

    /** The trial balance of the tenant's accounts (account codes are the ledger's; see {@link TenantAccounts#publicCode}). */
    public TrialBalance trialBalance(String tenant) {
        List<TrialBalance.Line> mine = ledger.trialBalance().lines().stream()
                .filter(l -> TenantAccounts.belongsTo(l.account().code(), tenant))
                .toList();
        return TrialBalance.of(null, mine);
    }
}
