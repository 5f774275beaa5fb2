package dev.exactly.ledger.internal;

import dev.exactly.ledger.Account;
import dev.exactly.ledger.BalanceFloorException;
import dev.exactly.ledger.DuplicateEntryException;
import dev.exactly.ledger.EntryKind;
import dev.exactly.ledger.EntryRequest;
import dev.exactly.ledger.JournalEntry;
import dev.exactly.ledger.LedgerConflictException;
import dev.exactly.ledger.LedgerStorageException;
import dev.exactly.ledger.LedgerValidationException;
import dev.exactly.ledger.LedgerValidationException.Reason;
import dev.exactly.ledger.Money;
import dev.exactly.ledger.Posting;
import dev.exactly.ledger.PostingRequest;
import dev.exactly.ledger.Side;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Posts entries inside the caller's transaction. After validating the request against the accounts, it
 * writes the entry in one round trip, the function {@code ledger_post_entry} of the migration:
 * <ol>
 *   <li>insert the entry and all its postings (a unique conflict inserts nothing: the entry holding the
 *       reference is returned when it is the one requested, otherwise the write is refused);</li>
 *   <li>lock the balance rows of the touched unsharded accounts in ascending account id order and apply
 *       the changes, refusing any row whose floor would be crossed;</li>
 *   <li>for each touched sharded account, apply its change to a shard no one else holds
 *       ({@code SKIP LOCKED}), waiting only when all are held.</li>
 * </ol>
 * The balance rows are locked last, so they are held only from then to the commit.
 */
public final class EntryWriter {

    private final AccountDirectory accounts;
    private final LedgerReader reader;
    private final InstantSource clock;

    public EntryWriter(AccountDirectory accounts, LedgerReader reader, InstantSource clock) {
        this.accounts = accounts;
        this.reader = reader;
        this.clock = clock;
    }

    /** Posts a standard, refund or adjustment entry; does not commit. */
    public JournalEntry post(Connection c, EntryRequest request) throws SQLException {
        if (request.kind() == EntryKind.REVERSAL) {
            throw new LedgerValidationException(Reason.INVALID_ENTRY, "reversals are made with Ledger.reverse");
        }
        Long original = request.originalEntryId();
        if (original != null) {
            requireEntry(c, original);
        }
        return write(c, request);
    }

    /** Posts the mirror image of an entry, linked to it; does not commit. */
    public JournalEntry reverse(Connection c, long entryId, @Nullable String externalRef, String description)
            throws SQLException {
        JournalEntry original = reader.entry(c, entryId)
                .orElseThrow(() -> unknownEntry(entryId));
        List<PostingRequest> mirror = original.postings().stream()
                .map(p -> new PostingRequest(p.accountId(), p.side().opposite(), p.amount()))
                .toList();
        return write(c, new EntryRequest(EntryKind.REVERSAL, entryId, externalRef, description, mirror));
    }

    private JournalEntry write(Connection c, EntryRequest request) throws SQLException {
        List<PostingRequest> lines = request.postings();
        Set<Long> ids = new LinkedHashSet<>();
        lines.forEach(p -> ids.add(p.accountId()));
        Map<Long, Account> touched = accounts.require(c, ids);
        TreeMap<Long, Money> changes = new TreeMap<>();
        for (PostingRequest p : lines) {
            Account account = touched.get(p.accountId());
            if (!account.currency().equals(p.amount().currency())) {
                throw new LedgerValidationException(Reason.CURRENCY_MISMATCH,
                        "posting of " + p.amount() + " to account " + account.code() + " held in " + account.currency());
            }
            Money change = Money.of(account.signedChange(p.side(), p.amount().minorUnits()), account.currency());
            changes.merge(account.id(), change, Money::plus);
        }
        changes.values().removeIf(Money::isZero);
        Instant postedAt = Jdbc.databasePrecision(clock.instant());
        Long entryId = insert(c, request, postedAt, changes, touched);
        if (entryId == null) {
            return existing(c, request);
        }
        List<Posting> postings = new ArrayList<>(lines.size());
        for (int i = 0; i < lines.size(); i++) {
            PostingRequest p = lines.get(i);
            postings.add(new Posting(i + 1, p.accountId(), p.side(), p.amount()));
        }
        return new JournalEntry(entryId, request.kind(), request.originalEntryId(), request.externalRef(),
                request.description(), postedAt, postings);
    }

    /**
     * One round trip: the entry, its postings, its balance changes (see {@link LedgerSql#POST_ENTRY}).
     *
     * @return the new entry's id, or {@code null} when a unique rule kept it out (nothing was written)
     */
    private static @Nullable Long insert(Connection c, EntryRequest request, Instant postedAt, TreeMap<Long, Money> changes,
            Map<Long, Account> touched) throws SQLException {
        List<PostingRequest> lines = request.postings();
        int n = lines.size();
        long[] accountIds = new long[n];
        String[] currencies = new String[n];
        String[] sides = new String[n];
        long[] amounts = new long[n];
        for (int i = 0; i < n; i++) {
            PostingRequest p = lines.get(i);
            accountIds[i] = p.accountId();
            currencies[i] = p.amount().currency().code();
            sides[i] = p.side().dbValue();
            amounts[i] = p.amount().minorUnits();
        }
        // ascending account id, unsharded and sharded apart
        Map<Long, Money> single = new TreeMap<>();
        Map<Long, Money> sharded = new TreeMap<>();
        changes.forEach((id, change) -> (touched.get(id).isSharded() ? sharded : single).put(id, change));
        int[] shardCounts = sharded.keySet().stream().mapToInt(id -> touched.get(id).shards()).toArray();
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.POST_ENTRY)) {
            ps.setString(1, request.kind().dbValue());
            Jdbc.setNullableLong(ps, 2, request.originalEntryId());
            Jdbc.setNullableText(ps, 3, request.externalRef());
            ps.setString(4, request.description());
            Jdbc.setInstant(ps, 5, postedAt);
            ps.setArray(6, Jdbc.bigints(c, accountIds));
            ps.setArray(7, Jdbc.texts(c, currencies));
            ps.setArray(8, Jdbc.texts(c, sides));
            ps.setArray(9, Jdbc.bigints(c, amounts));
            ps.setArray(10, Jdbc.bigints(c, keys(single)));
            ps.setArray(11, Jdbc.bigints(c, minorUnits(single)));
            ps.setArray(12, Jdbc.bigints(c, keys(sharded)));
            ps.setArray(13, Jdbc.bigints(c, minorUnits(sharded)));
            ps.setArray(14, Jdbc.integers(c, shardCounts));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long entryId = rs.getLong("entry_id");
                if (rs.wasNull()) {
                    return null;
                }
                Array refused = rs.getArray("refused");
                if (refused != null) {
                    long accountId = ((Number) ((Object[]) refused.getArray())[0]).longValue();
                    throw floorCrossed(c, touched.get(accountId), changes.get(accountId));
                }
                return entryId;
            }
        }
    }

    private static long[] keys(Map<Long, Money> changes) {
        return changes.keySet().stream().mapToLong(Long::longValue).toArray();
    }

    private static long[] minorUnits(Map<Long, Money> changes) {
        return changes.values().stream().mapToLong(Money::minorUnits).toArray();
    }

    private static RuntimeException floorCrossed(Connection c, Account account, Money change) throws SQLException {
        Long floor = account.floorMinorUnits();
        if (floor == null) {
            return new LedgerStorageException("the balance row of account " + account.id() + " is missing", null, null);
        }
        List<Long> balance = LedgerReader.longs(c, LedgerSql.SHARD_BALANCE, account.id(), 0);
        return new BalanceFloorException(account.id(), Money.of(floor, account.currency()),
                Money.of(balance.isEmpty() ? 0 : balance.get(0), account.currency()), change);
    }

    /**
     * After a unique conflict: the entry holding the external reference when it is the one requested
     * (a retried write), else the refusal that names the rule and the entry that got there first.
     */
    private JournalEntry existing(Connection c, EntryRequest request) throws SQLException {
        String externalRef = request.externalRef();
        if (externalRef != null) {
            Optional<JournalEntry> holder = reader.entryByExternalRef(c, externalRef);
            if (holder.isPresent()) {
                Optional<String> difference = difference(request, holder.get());
                if (difference.isPresent()) {
                    throw new LedgerConflictException(externalRef, holder.get(), difference.get());
                }
                return holder.get();
            }
        }
        Long original = request.originalEntryId();
        if (request.kind() == EntryKind.REVERSAL && original != null) {
            Optional<Long> existing = firstId(c, LedgerSql.REVERSAL_OF, original);
            if (existing.isPresent()) {
                throw new DuplicateEntryException(DuplicateEntryException.Reason.ALREADY_REVERSED, existing.get(),
                        "entry " + original + " is reversed by entry " + existing.get());
            }
        }
        // the conflicting row is not visible to this transaction's snapshot (stricter isolation)
        throw new SQLException("entry conflicted with one this transaction can't see", "40001");
    }

    /**
     * How a stored entry differs from a request in what it does: kind, link, or postings compared as a
     * multiset of (account, side, amount with currency), so their order does not matter. The description
     * is free text and not compared.
     */
    static Optional<String> difference(EntryRequest request, JournalEntry stored) {
        if (request.kind() != stored.kind()) {
            return Optional.of("kind " + stored.kind().dbValue() + ", not " + request.kind().dbValue());
        }
        if (!Objects.equals(request.originalEntryId(), stored.originalEntryId())) {
            return Optional.of("linked to entry " + stored.originalEntryId() + ", not " + request.originalEntryId());
        }
        List<String> requested = request.postings().stream()
                .map(p -> line(p.accountId(), p.side(), p.amount()))
                .sorted()
                .toList();
        List<String> existing = stored.postings().stream()
                .map(p -> line(p.accountId(), p.side(), p.amount()))
                .sorted()
                .toList();
        if (!requested.equals(existing)) {
            return Optional.of("postings " + existing + ", not " + requested);
        }
        return Optional.empty();
    }

    private static String line(long accountId, Side side, Money amount) {
        return side.dbValue() + " " + amount.minorUnits() + " " + amount.currency().code() + " to account " + accountId;
    }

    private static Optional<Long> firstId(Connection c, String sql, Object key) throws SQLException {
        return LedgerReader.longs(c, sql, key).stream().findFirst();
    }

    private static void requireEntry(Connection c, long entryId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.ENTRY_EXISTS)) {
            ps.setLong(1, entryId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw unknownEntry(entryId);
                }
            }
        }
    }

    private static LedgerValidationException unknownEntry(long entryId) {
        return new LedgerValidationException(Reason.UNKNOWN_ENTRY, "no entry with id " + entryId);
    }
}
