package dev.exactly.ledger.internal;

import dev.exactly.ledger.Account;
import dev.exactly.ledger.AccountBalance;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.EntryKind;
import dev.exactly.ledger.EntryPage;
import dev.exactly.ledger.EntryQuery;
import dev.exactly.ledger.JournalEntry;
import dev.exactly.ledger.LedgerValidationException;
import dev.exactly.ledger.LedgerValidationException.Reason;
import dev.exactly.ledger.Money;
import dev.exactly.ledger.PendingHold;
import dev.exactly.ledger.Posting;
import dev.exactly.ledger.Side;
import dev.exactly.ledger.TrialBalance;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** Reads entries, balances and trial balances. Each read is one statement, so it sees one snapshot. */
public final class LedgerReader {

    private static final Instant FIRST_INSTANT = Instant.parse("0001-01-01T00:00:00Z");
    private static final Instant LAST_INSTANT = Instant.parse("9999-12-31T23:59:59.999999Z");

    private final AccountDirectory accounts;

    public LedgerReader(AccountDirectory accounts) {
        this.accounts = accounts;
    }

    public Optional<JournalEntry> entry(Connection c, long id) throws SQLException {
        List<JournalEntry> entries = entries(c, List.of(id));
        return entries.isEmpty() ? Optional.empty() : Optional.of(entries.get(0));
    }

    public Optional<JournalEntry> entryByExternalRef(Connection c, String externalRef) throws SQLException {
        List<Long> ids = longs(c, LedgerSql.ENTRY_ID_BY_EXTERNAL_REF, externalRef);
        return ids.isEmpty() ? Optional.empty() : entry(c, ids.get(0));
    }

    public List<JournalEntry> linkedEntries(Connection c, long originalEntryId) throws SQLException {
        return entries(c, longs(c, LedgerSql.LINKED_ENTRY_IDS, originalEntryId));
    }

    public EntryPage entries(Connection c, EntryQuery query) throws SQLException {
        Long accountId = query.accountId();
        List<Long> ids = accountId == null
                ? longs(c, LedgerSql.PAGE_ENTRY_IDS, query.afterId(), query.limit() + 1)
                : longs(c, LedgerSql.ACCOUNT_PAGE_ENTRY_IDS, accountId, query.afterId(), query.limit() + 1);
        if (ids.size() <= query.limit()) {
            return new EntryPage(entries(c, ids), null);
        }
        List<Long> page = ids.subList(0, query.limit());
        return new EntryPage(entries(c, page), query.after(page.get(page.size() - 1)));
    }

    /** The first column, as {@code long}s, of what a statement returns for these parameters. */
    static List<Long> longs(Connection c, String sql, Object... parameters) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setObject(i + 1, parameters[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
        }
        return ids;
    }

    /** The current normal-side balance: the sum of the account's balance rows. */
    public Money balance(Connection c, long accountId) throws SQLException {
        return balances(c, accountId).available();
    }

    /** The current normal-side available balance and pending amounts: sums over the account's balance rows. */
    public AccountBalance balances(Connection c, long accountId) throws SQLException {
        Account account = accounts.require(c, accountId);
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.ACCOUNT_BALANCES)) {
            ps.setLong(1, accountId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                BigDecimal sum = rs.getBigDecimal(1);
                if (sum == null) {
                    throw new LedgerValidationException(Reason.UNKNOWN_ACCOUNT, "no account with id " + accountId);
                }
                Currency currency = account.currency();
                return new AccountBalance(
                        money(sum, currency),
                        money(rs.getBigDecimal(2), currency),
                        money(rs.getBigDecimal(3), currency));
            }
        }
    }

    /** The normal-side balance from the postings with a ledger time at or before {@code asOf}. */
    public Money balance(Connection c, long accountId, Instant asOf) throws SQLException {
        return balances(c, accountId, asOf).available();
    }

    /** The normal-side balances from the postings with a ledger time at or before {@code asOf}. */
    public AccountBalance balances(Connection c, long accountId, Instant asOf) throws SQLException {
        Account account = accounts.require(c, accountId);
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.ACCOUNT_BALANCES_AS_OF)) {
            ps.setString(1, account.normalBalance().dbValue());
            ps.setLong(2, accountId);
            Jdbc.setInstant(ps, 3, asOfParameter(asOf));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                BigDecimal increase = rs.getBigDecimal("increase");
                BigDecimal decrease = rs.getBigDecimal("decrease");
                BigDecimal available =
                        rs.getBigDecimal("total").subtract(increase).add(decrease);
                Currency currency = account.currency();
                return new AccountBalance(
                        money(available, currency), money(increase, currency), money(decrease, currency));
            }
        }
    }

    /** The pending entry with this id and its capture or void, if any. */
    public Optional<PendingHold> pendingHold(Connection c, long entryId) throws SQLException {
        Optional<JournalEntry> hold = entry(c, entryId);
        if (hold.isEmpty()) {
            return Optional.empty();
        }
        if (hold.get().kind() != EntryKind.PENDING) {
            throw new LedgerValidationException(
                    Reason.INVALID_ENTRY,
                    "entry " + entryId + " is a " + hold.get().kind().dbValue() + " entry, not a pending one");
        }
        List<Long> resolution = longs(c, LedgerSql.RESOLUTION_OF, entryId);
        return Optional.of(new PendingHold(
                hold.get(),
                resolution.isEmpty() ? null : entry(c, resolution.get(0)).orElseThrow()));
    }

    /** Open holds posted before {@code before}, oldest first, locked (FOR UPDATE SKIP LOCKED). */
    public List<JournalEntry> lockOpenHolds(Connection c, Instant before, int limit) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.LOCK_OPEN_HOLDS)) {
            Jdbc.setInstant(ps, 1, asOfParameter(before));
            ps.setInt(2, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
        }
        // oldest first, as locked (entries() orders by id, which is allocation order)
        Map<Long, JournalEntry> byId = new HashMap<>();
        entries(c, ids).forEach(e -> byId.put(e.id(), e));
        return ids.stream().map(byId::get).toList();
    }

    /** The trial balance of the current balances, or as of a time from the postings. */
    public TrialBalance trialBalance(Connection c, @Nullable Instant asOf) throws SQLException {
        List<TrialBalance.Line> lines = new ArrayList<>();
        try (PreparedStatement ps =
                c.prepareStatement(asOf == null ? LedgerSql.TRIAL_BALANCE : LedgerSql.TRIAL_BALANCE_AS_OF)) {
            if (asOf != null) {
                Jdbc.setInstant(ps, 1, asOfParameter(asOf));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Account account = AccountDirectory.map(rs);
                    lines.add(new TrialBalance.Line(
                            account,
                            money(rs.getBigDecimal("balance"), account.currency()),
                            money(rs.getBigDecimal("pending"), account.currency())));
                }
            }
        }
        return TrialBalance.of(asOf, lines);
    }

    /** Floors to microseconds (so no later posting is counted) and clamps to the years PostgreSQL stores. */
    private static Instant asOfParameter(Instant asOf) {
        Instant floored = Jdbc.databasePrecision(asOf);
        if (floored.isAfter(LAST_INSTANT)) {
            return LAST_INSTANT;
        }
        return floored.isBefore(FIRST_INSTANT) ? FIRST_INSTANT : floored;
    }

    private static Money money(BigDecimal minorUnits, Currency currency) {
        try {
            return Money.of(minorUnits.longValueExact(), currency);
        } catch (ArithmeticException e) {
            throw new LedgerValidationException(
                    Reason.AMOUNT_OVERFLOW, "balance " + minorUnits + " does not fit in 64-bit minor units");
        }
    }

    /** The entries with these ids, in id order, each with its postings in line order. */
    private static List<JournalEntry> entries(Connection c, List<Long> ids) throws SQLException {
        List<JournalEntry> entries = new ArrayList<>();
        if (ids.isEmpty()) {
            return entries;
        }
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.ENTRIES_BY_IDS)) {
            ps.setArray(
                    1, Jdbc.bigints(c, ids.stream().mapToLong(Long::longValue).toArray()));
            collect(ps.executeQuery(), entries);
        }
        return entries;
    }

    /** Groups rows of entry columns + posting columns, ordered by entry then line. */
    private static void collect(ResultSet resultSet, List<JournalEntry> entries) throws SQLException {
        try (ResultSet rs = resultSet) {
            EntryRow current = null;
            while (rs.next()) {
                long id = rs.getLong("id");
                if (current == null || current.id != id) {
                    if (current != null) {
                        entries.add(current.toEntry());
                    }
                    current = new EntryRow(
                            id,
                            EntryKind.fromDb(rs.getString("kind")),
                            Jdbc.nullableLong(rs, "original_id"),
                            rs.getString("external_ref"),
                            rs.getString("description"),
                            Jdbc.instant(rs, "posted_at"));
                }
                current.postings.add(new Posting(
                        rs.getInt("line"),
                        rs.getLong("account_id"),
                        Side.fromDb(rs.getString("side")),
                        Money.of(rs.getLong("amount"), Currency.of(rs.getString("currency"))),
                        rs.getBoolean("pending")));
            }
            if (current != null) {
                entries.add(current.toEntry());
            }
        }
    }

    private static final class EntryRow {
        final long id;
        final EntryKind kind;
        final @Nullable Long originalId;
        final @Nullable String externalRef;
        final String description;
        final Instant postedAt;
        final List<Posting> postings = new ArrayList<>();

        EntryRow(
                long id,
                EntryKind kind,
                @Nullable Long originalId,
                @Nullable String externalRef,
                String description,
                Instant postedAt) {
            this.id = id;
            this.kind = kind;
            this.originalId = originalId;
            this.externalRef = externalRef;
            this.description = description;
            this.postedAt = postedAt;
        }

        JournalEntry toEntry() {
            return new JournalEntry(id, kind, originalId, externalRef, description, postedAt, postings);
        }
    }
}
