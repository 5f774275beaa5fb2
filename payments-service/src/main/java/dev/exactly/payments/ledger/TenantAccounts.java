package dev.exactly.payments.ledger;

import dev.exactly.ledger.Account;
import dev.exactly.ledger.AccountSpec;
import dev.exactly.ledger.AccountType;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.Ledger;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The ledger accounts of a tenant, and their codes:
 * <ul>
 *   <li>{@code clearing:{tenant}:{CUR}}: what the processor owes us for the tenant's charges (asset,
 *       sharded: every charge touches it, so its balance is spread over several rows);</li>
 *   <li>{@code customer:{tenant}:{customer}:{CUR}}: what the tenant owes the customer (liability, never
 *       below zero).</li>
 * </ul>
 * Every entry of a tenant touches only that tenant's accounts, so the tenant's accounts form a ledger
 * that balances on its own. Accounts are opened lazily (opening is get-or-create, also under a race)
 * and cached: they are immutable.
 */
public final class TenantAccounts {
    private final Ledger ledger;
    private final int clearingShards;
    private final ConcurrentMap<String, Account> opened = new ConcurrentHashMap<>();

    public TenantAccounts(Ledger ledger, int clearingShards) {
        this.ledger = ledger;
        this.clearingShards = clearingShards;
    }

    public static String clearingCode(String tenant, Currency currency) {
        return "clearing:" + tenant + ":" + currency.code();
    }

    public static String customerCode(String tenant, String customer, Currency currency) {
        return "customer:" + tenant + ":" + customer + ":" + currency.code();
    }

    /** The prefix of every account code of {@code tenant}'s, by kind. */
    public static boolean belongsTo(String accountCode, String tenant) {
        return accountCode.startsWith("clearing:" + tenant + ":") || accountCode.startsWith("customer:" + tenant + ":");
    }

    /** The code as the tenant names it: without the tenant, currency in lower case ({@code customer:cus_1:usd}). */
    public static String publicCode(String accountCode, String tenant) {
        String[] parts = accountCode.split(":", -1);
        StringBuilder out = new StringBuilder(parts[0]);
        for (int i = 2; i < parts.length; i++) {
            out.append(':').append(i == parts.length - 1 ? parts[i].toLowerCase(Locale.ROOT) : parts[i]);
        }
        return out.toString();
    }

    /**
     * A customer id as a charge names it: anything else names no account (a NUL in it went to the database,
     * which refused it, and the client was told the database was unavailable).
     */
    private static final java.util.regex.Pattern CUSTOMER = java.util.regex.Pattern.compile("[A-Za-z0-9_-]{1,64}");

    /**
     * The internal code of an account named the tenant's way ({@code clearing:usd},
     * {@code customer:cus_1:usd}), or empty when the name is not one.
     */
    public static Optional<String> internalCode(String publicCode, String tenant) {
        String[] parts = publicCode.split(":", -1);
        try {
            if (parts.length == 2 && parts[0].equals("clearing")) {
                return Optional.of(clearingCode(tenant, Currency.of(parts[1])));
            }
            if (parts.length == 3
                    && parts[0].equals("customer")
                    && CUSTOMER.matcher(parts[1]).matches()) {
                return Optional.of(customerCode(tenant, parts[1], Currency.of(parts[2])));
            }
        } catch (RuntimeException unknownCurrency) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /** The tenant's clearing account in this currency, opened if needed. */
    public Account clearing(String tenant, Currency currency) {
        return open(AccountSpec.of(clearingCode(tenant, currency), AccountType.ASSET, currency)
                .withShards(clearingShards));
    }

    /** The customer's account in this currency, opened if needed. */
    public Account customer(String tenant, String customer, Currency currency) {
        return open(AccountSpec.of(customerCode(tenant, customer, currency), AccountType.LIABILITY, currency)
                .withFloor(0));
    }

    /** An existing account by internal code, without opening it. */
    public Optional<Account> find(String code) {
        Account cached = opened.get(code);
        return cached != null ? Optional.of(cached) : ledger.account(code);
    }

    private Account open(AccountSpec spec) {
        Account cached = opened.get(spec.code());
        if (cached != null) {
            return cached;
        }
        Account account = ledger.openAccount(spec);
        opened.putIfAbsent(spec.code(), account);
        return account;
    }
}
