package dev.exactly.ledger.internal;

import dev.exactly.ledger.Account;
import dev.exactly.ledger.AccountConflictException;
import dev.exactly.ledger.AccountSpec;
import dev.exactly.ledger.AccountType;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.LedgerValidationException;
import dev.exactly.ledger.LedgerValidationException.Reason;
import dev.exactly.ledger.Side;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Opens and finds accounts. Accounts never change once opened, so those met while posting are cached
 * by id (bounded) to save a query per entry; the database re-checks accounts and currencies of every
 * posting, so a stale entry (an account whose opening was rolled back) can't slip through.
 */
public final class AccountDirectory {

    private final Map<Long, Account> cache = new ConcurrentHashMap<>();
    private final int maxCached;

    public AccountDirectory(int maxCached) {
        this.maxCached = maxCached;
    }

    /** Opens the account, or returns the existing one with the same code if it matches the spec. */
    public Account open(Connection c, AccountSpec spec, Instant now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.INSERT_ACCOUNT)) {
            ps.setString(1, spec.code());
            ps.setString(2, spec.type().dbValue());
            ps.setString(3, spec.normalBalance().dbValue());
            ps.setString(4, spec.currency().code());
            Jdbc.setNullableLong(ps, 5, spec.floorMinorUnits());
            ps.setInt(6, spec.shards());
            Jdbc.setInstant(ps, 7, Jdbc.databasePrecision(now));
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return map(rs);
                }
            }
        }
        Account existing = findByCode(c, spec.code())
                .orElseThrow(
                        () -> new SQLException("account " + spec.code() + " conflicted but is not visible", "40001"));
        if (!spec.matches(existing)) {
            throw new AccountConflictException(existing, spec);
        }
        return existing;
    }

    /** The account with this id, read from the database. */
    public Optional<Account> find(Connection c, long id) throws SQLException {
        Map<Long, Account> found = load(c, List.of(id));
        return Optional.ofNullable(found.get(id));
    }

    /** The account with this code, read from the database. */
    public Optional<Account> findByCode(Connection c, String code) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.ACCOUNT_BY_CODE)) {
            ps.setString(1, code);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(map(rs)) : Optional.empty();
            }
        }
    }

    /** The account with this id (cached), or {@link Reason#UNKNOWN_ACCOUNT}. */
    public Account require(Connection c, long id) throws SQLException {
        return Objects.requireNonNull(require(c, List.of(id)).get(id), "require holds every id asked for");
    }

    /** The accounts with these ids when every one of them is cached; otherwise empty (nothing is read). */
    public Optional<Map<Long, Account>> cached(Collection<Long> ids) {
        Map<Long, Account> result = new HashMap<>();
        for (Long id : ids) {
            Account cached = cache.get(id);
            if (cached == null) {
                return Optional.empty();
            }
            result.put(id, cached);
        }
        return Optional.of(result);
    }

    /** The accounts with these ids (cached), or {@link Reason#UNKNOWN_ACCOUNT} if one is missing. */
    public Map<Long, Account> require(Connection c, Collection<Long> ids) throws SQLException {
        Map<Long, Account> result = new HashMap<>();
        List<Long> missing = new ArrayList<>();
        for (Long id : ids) {
            Account cached = cache.get(id);
            if (cached != null) {
                result.put(id, cached);
            } else if (!result.containsKey(id) && !missing.contains(id)) {
                missing.add(id);
            }
        }
        if (!missing.isEmpty()) {
            Map<Long, Account> loaded = load(c, missing);
            for (Long id : missing) {
                Account account = loaded.get(id);
                if (account == null) {
                    throw new LedgerValidationException(Reason.UNKNOWN_ACCOUNT, "no account with id " + id);
                }
                remember(account);
                result.put(id, account);
            }
        }
        return result;
    }

    private void remember(Account account) {
        if (cache.size() >= maxCached) {
            cache.clear();
        }
        cache.put(account.id(), account);
    }

    private static Map<Long, Account> load(Connection c, List<Long> ids) throws SQLException {
        long[] array = ids.stream().mapToLong(Long::longValue).toArray();
        Map<Long, Account> found = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.ACCOUNTS_BY_ID)) {
            ps.setArray(1, Jdbc.bigints(c, array));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Account account = map(rs);
                    found.put(account.id(), account);
                }
            }
        }
        return found;
    }

    /** Maps the account columns of the current row. */
    static Account map(ResultSet rs) throws SQLException {
        return new Account(
                rs.getLong("id"),
                rs.getString("code"),
                AccountType.fromDb(rs.getString("type")),
                Side.fromDb(rs.getString("normal_balance")),
                Currency.of(rs.getString("currency")),
                Jdbc.nullableLong(rs, "floor_minor"),
                rs.getInt("shards"),
                Jdbc.instant(rs, "created_at"));
    }
}
