package dev.exactly.ledger.internal;

import dev.exactly.ledger.Account;
import dev.exactly.ledger.BalanceFloorException;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.DuplicateEntryException;
import dev.exactly.ledger.EntryKind;
import dev.exactly.ledger.EntryRequest;
import dev.exactly.ledger.EntryWrite;
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
import java.sql.Statement;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Writes entries inside the caller's transaction. After validating the request against the accounts (and,
 * for a capture or void, against its pending entry), it writes the entry in one round trip, the function
 * {@code ledger_write_entry} of the migrations:
 * <ol>
 *   <li>a capture or void locks the open-hold row of its pending entry first;</li>
 *   <li>insert the entry and all its postings (a unique conflict inserts nothing: the entry holding the
 *       reference is returned when it is the one requested, otherwise the write is refused);</li>
 *   <li>lock the balance rows of the touched unsharded accounts in ascending account id order and apply
 *       the changes (available balance, pending amounts), refusing any row whose floor would be crossed;</li>
 *   <li>for each touched sharded account, apply its change to a shard no one else holds
 *       ({@code SKIP LOCKED}), waiting only when all are held.</li>
 * </ol>
 * The balance rows are locked last, so they are held only from then to the commit.
 */
public final class EntryWriter {

    /** A line to write: a posting, pending (held or released) or posted. */
    private record Line(long accountId, Side side, Money amount, boolean pending) {

        static Line of(PostingRequest p, boolean pending) {
            return new Line(p.accountId(), p.side(), p.amount(), pending);
        }

        /** For comparing entries line by line, whatever their order. */
        String key() {
            return (pending ? "pending " : "") + side.dbValue() + " " + amount.minorUnits() + " "
                    + amount.currency().code() + " to account " + accountId;
        }
    }

    /** An entry to write. */
    private record Draft(
            EntryKind kind,
            @Nullable Long originalEntryId,
            @Nullable String externalRef,
            String description,
            List<Line> lines) {}

    /** The change an entry makes to one account: available balance and pending amounts, normal side. */
    private record Change(Money available, Money increase, Money decrease) {

        static Change of(Account account, long available, long increase, long decrease) {
            Currency currency = account.currency();
            return new Change(
                    Money.of(available, currency), Money.of(increase, currency), Money.of(decrease, currency));
        }

        Change plus(Change other) {
            return new Change(
                    available.plus(other.available), increase.plus(other.increase), decrease.plus(other.decrease));
        }

        boolean isZero() {
            return available.isZero() && increase.isZero() && decrease.isZero();
        }

        /** What the change does to the balance less held decreases, which the floor bounds. */
        Money unreserved() {
            return available.minus(decrease);
        }
    }

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
        return write(c, postDraft(c, request));
    }

    private Draft postDraft(Connection c, EntryRequest request) throws SQLException {
        requirePostKind(request);
        Long original = request.originalEntryId();
        if (original != null) {
            EntryKind originalKind = requireEntry(c, original);
            if (request.kind() == EntryKind.REFUND
                    && (originalKind == EntryKind.PENDING || originalKind == EntryKind.VOID)) {
                throw invalid("entry " + original + " is a " + originalKind.dbValue()
                        + " entry: nothing of it is posted to refund (refund its capture)");
            }
        }
        return postLines(request);
    }

    private static void requirePostKind(EntryRequest request) {
        switch (request.kind()) {
            case REVERSAL -> throw invalid("reversals are made with Ledger.reverse");
            case PENDING, CAPTURE, VOID ->
                throw invalid("pending entries are made with Ledger.hold, captured with "
                        + "Ledger.capture and voided with Ledger.voidHold");
            default -> {}
        }
    }

    private static Draft postLines(EntryRequest request) {
        return new Draft(
                request.kind(),
                request.originalEntryId(),
                request.externalRef(),
                request.description(),
                lines(request.postings(), false));
    }

    /** Posts the postings of {@code request} as a pending entry (a hold); does not commit. */
    public JournalEntry hold(Connection c, EntryRequest request) throws SQLException {
        return write(c, holdDraft(request));
    }

    private static Draft holdDraft(EntryRequest request) {
        if (request.kind() != EntryKind.STANDARD) {
            throw invalid("a hold is built with EntryRequest.builder(), not as a "
                    + request.kind().dbValue());
        }
        return new Draft(
                EntryKind.PENDING, null, request.externalRef(), request.description(), lines(request.postings(), true));
    }

    /** Captures all of a pending entry: releases all it holds and posts the same; does not commit. */
    public JournalEntry captureAll(Connection c, long pendingEntryId, @Nullable String externalRef, String description)
            throws SQLException {
        JournalEntry hold = requireHold(c, pendingEntryId);
        List<PostingRequest> all = hold.postings().stream()
                .map(p -> new PostingRequest(p.accountId(), p.side(), p.amount()))
                .toList();
        return capture(c, hold, all, externalRef, description);
    }

    /** Captures a pending entry: releases all it holds and posts {@code captured}; does not commit. */
    public JournalEntry capture(
            Connection c,
            long pendingEntryId,
            List<PostingRequest> captured,
            @Nullable String externalRef,
            String description)
            throws SQLException {
        return capture(c, requireHold(c, pendingEntryId), captured, externalRef, description);
    }

    private JournalEntry capture(
            Connection c,
            JournalEntry hold,
            List<PostingRequest> captured,
            @Nullable String externalRef,
            String description)
            throws SQLException {
        long pendingEntryId = hold.id();
        // validates the captured lines (at least two, balanced per currency), the reference and description
        EntryRequest request = new EntryRequest(EntryKind.CAPTURE, pendingEntryId, externalRef, description, captured);
        requireHeld(hold, request.postings());
        List<Line> lines = new ArrayList<>(lines(request.postings(), false));
        lines.addAll(releases(hold));
        return write(c, new Draft(EntryKind.CAPTURE, pendingEntryId, externalRef, description, lines));
    }

    /** Captures {@code amount} of a pending entry of one debit and one credit; does not commit. */
    public JournalEntry capture(
            Connection c, long pendingEntryId, Money amount, @Nullable String externalRef, String description)
            throws SQLException {
        JournalEntry hold = requireHold(c, pendingEntryId);
        List<Posting> held = hold.postings();
        if (held.size() != 2 || held.get(0).side() == held.get(1).side()) {
            throw invalid("entry " + pendingEntryId + " has " + held.size() + " postings: capture an amount only from "
                    + "a hold of one debit and one credit, or name the captured postings");
        }
        List<PostingRequest> captured = held.stream()
                .map(p -> new PostingRequest(p.accountId(), p.side(), amount))
                .toList();
        return capture(c, hold, captured, externalRef, description);
    }

    /** Voids a pending entry: releases all it holds, posts nothing; does not commit. */
    public JournalEntry voidHold(Connection c, long pendingEntryId, @Nullable String externalRef, String description)
            throws SQLException {
        JournalEntry hold = requireHold(c, pendingEntryId);
        List<Line> releases = releases(hold);
        // validates the reference and the description
        new EntryRequest(
                EntryKind.VOID,
                pendingEntryId,
                externalRef,
                description,
                releases.stream()
                        .map(l -> new PostingRequest(l.accountId(), l.side(), l.amount()))
                        .toList());
        return write(c, new Draft(EntryKind.VOID, pendingEntryId, externalRef, description, releases));
    }

    /** Posts the mirror image of an entry's posted lines, linked to it; does not commit. */
    public JournalEntry reverse(Connection c, long entryId, @Nullable String externalRef, String description)
            throws SQLException {
        JournalEntry original = reader.entry(c, entryId).orElseThrow(() -> unknownEntry(entryId));
        if (original.kind() == EntryKind.PENDING || original.kind() == EntryKind.VOID) {
            throw invalid("entry " + entryId + " is a " + original.kind().dbValue()
                    + " entry, which posts nothing: a hold is voided, not reversed");
        }
        List<PostingRequest> mirror = original.postings().stream()
                .filter(p -> !p.pending())
                .map(p -> new PostingRequest(p.accountId(), p.side().opposite(), p.amount()))
                .toList();
        EntryRequest request = new EntryRequest(EntryKind.REVERSAL, entryId, externalRef, description, mirror);
        return write(
                c, new Draft(EntryKind.REVERSAL, entryId, externalRef, description, lines(request.postings(), false)));
    }

    private static List<Line> lines(List<PostingRequest> postings, boolean pending) {
        return postings.stream().map(p -> Line.of(p, pending)).toList();
    }

    /** The pending lines that release everything a hold holds: its lines on the opposite sides. */
    private static List<Line> releases(JournalEntry hold) {
        return hold.postings().stream()
                .map(p -> new Line(p.accountId(), p.side().opposite(), p.amount(), true))
                .toList();
    }

    private JournalEntry requireHold(Connection c, long entryId) throws SQLException {
        JournalEntry hold = reader.entry(c, entryId).orElseThrow(() -> unknownEntry(entryId));
        if (hold.kind() != EntryKind.PENDING) {
            throw invalid("entry " + entryId + " is a " + hold.kind().dbValue() + " entry, not a pending one");
        }
        return hold;
    }

    /**
     * Every captured (account, side) was held, and no more than was held (the currency is the account's,
     * checked when the entry is written).
     */
    private static void requireHeld(JournalEntry hold, List<PostingRequest> captured) {
        Map<String, Long> left = new HashMap<>();
        for (Posting p : hold.postings()) {
            left.merge(p.accountId() + " " + p.side().dbValue(), p.amount().minorUnits(), Math::addExact);
        }
        for (PostingRequest p : captured) {
            String key = p.accountId() + " " + p.side().dbValue();
            Long held = left.get(key);
            if (held == null) {
                throw invalid(
                        "entry " + hold.id() + " holds no " + p.side().dbValue() + " to account " + p.accountId());
            }
            long rest = held - p.amount().minorUnits();
            if (rest < 0) {
                throw new LedgerValidationException(
                        Reason.INVALID_AMOUNT,
                        "capture of " + p.amount() + " ("
                                + p.side().dbValue() + " to account " + p.accountId() + ") exceeds what entry "
                                + hold.id()
                                + " holds");
            }
            left.put(key, rest);
        }
    }

    private JournalEntry write(Connection c, Draft draft) throws SQLException {
        Prepared prepared = prepare(c, draft);
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.WRITE_ENTRY)) {
            prepared.bind(ps, 1);
            ps.executeQuery();
            return prepared.result(ps);
        }
    }

    /** {@link #post} as a statement to send with others in one round trip; validated now. */
    public EntryWrite preparePost(Connection c, EntryRequest request) throws SQLException {
        return prepare(c, postDraft(c, request));
    }

    /** {@link #hold} as a statement to send with others in one round trip; validated now. */
    public EntryWrite prepareHold(Connection c, EntryRequest request) throws SQLException {
        return prepare(c, holdDraft(request));
    }

    /**
     * {@link #preparePost} without a connection, when nothing of it needs the database: its accounts are
     * known already and it names no original entry. Empty otherwise.
     */
    public Optional<EntryWrite> preparePostKnown(EntryRequest request) {
        if (request.originalEntryId() != null) {
            return Optional.empty();
        }
        requirePostKind(request);
        return prepareKnown(postLines(request));
    }

    /** {@link #prepareHold} without a connection, when its accounts are known already. Empty otherwise. */
    public Optional<EntryWrite> prepareHoldKnown(EntryRequest request) {
        return prepareKnown(holdDraft(request));
    }

    private Optional<EntryWrite> prepareKnown(Draft draft) {
        return accounts.cached(accountIds(draft)).map(touched -> prepare(draft, touched));
    }

    private static Set<Long> accountIds(Draft draft) {
        Set<Long> ids = new LinkedHashSet<>();
        draft.lines().forEach(l -> ids.add(l.accountId()));
        return ids;
    }

    /** Validates a draft against its accounts and computes the balance changes: ready to be written. */
    private Prepared prepare(Connection c, Draft draft) throws SQLException {
        return prepare(draft, accounts.require(c, accountIds(draft)));
    }

    /** An account of the entry: {@code touched} holds every one its lines name ({@link AccountDirectory#require}). */
    private static Account account(Map<Long, Account> touched, long id) {
        return Objects.requireNonNull(touched.get(id), "an account of the entry");
    }

    private Prepared prepare(Draft draft, Map<Long, Account> touched) {
        TreeMap<Long, Change> changes = new TreeMap<>();
        for (Line l : draft.lines()) {
            Account account = account(touched, l.accountId());
            if (!account.currency().equals(l.amount().currency())) {
                throw new LedgerValidationException(
                        Reason.CURRENCY_MISMATCH,
                        "posting of " + l.amount() + " to account " + account.code() + " held in "
                                + account.currency());
            }
            changes.merge(account.id(), change(account, draft.kind(), l), Change::plus);
        }
        changes.values().removeIf(Change::isZero);
        return new Prepared(draft, Jdbc.databasePrecision(clock.instant()), changes, touched);
    }

    /**
     * An entry ready to be written by one statement, {@link LedgerSql#WRITE_ENTRY}: the entry, its postings,
     * its balance changes.
     */
    private final class Prepared implements EntryWrite {
        private final Draft draft;
        private final Instant postedAt;
        private final SortedMap<Long, Change> changes;
        private final Map<Long, Account> touched;

        Prepared(Draft draft, Instant postedAt, SortedMap<Long, Change> changes, Map<Long, Account> touched) {
            this.draft = draft;
            this.postedAt = postedAt;
            this.changes = changes;
            this.touched = touched;
        }

        @Override
        public String sql() {
            return LedgerSql.WRITE_ENTRY;
        }

        @Override
        public int bind(PreparedStatement ps, int first) throws SQLException {
            return EntryWriter.bind(ps, first, draft, postedAt, changes, touched);
        }

        @Override
        public boolean mayBeRefused() {
            return changes.entrySet().stream()
                    .anyMatch(e -> !account(touched, e.getKey()).isSharded()
                            && e.getValue().unreserved().isNegative());
        }

        @Override
        public JournalEntry result(Statement statement) throws SQLException {
            Long entryId;
            try (ResultSet rs = statement.getResultSet()) {
                entryId = EntryWriter.entryId(statement.getConnection(), rs, changes, touched);
            }
            if (entryId == null) {
                return existing(statement.getConnection(), draft);
            }
            List<Posting> postings = new ArrayList<>(draft.lines().size());
            for (int i = 0; i < draft.lines().size(); i++) {
                Line l = draft.lines().get(i);
                postings.add(new Posting(i + 1, l.accountId(), l.side(), l.amount(), l.pending()));
            }
            return new JournalEntry(
                    entryId,
                    draft.kind(),
                    draft.originalEntryId(),
                    draft.externalRef(),
                    draft.description(),
                    postedAt,
                    postings);
        }
    }

    /**
     * What a line does to its account: a posted line moves the available balance; a held line (of a
     * pending entry) raises the pending increase (on the normal side) or decrease (on the other); a
     * released line (of a capture or void, on the side opposite the hold's) lowers them again.
     */
    private static Change change(Account account, EntryKind kind, Line l) {
        long amount = l.amount().minorUnits();
        if (!l.pending()) {
            return Change.of(account, account.signedChange(l.side(), amount), 0, 0);
        }
        boolean normal = l.side() == account.normalBalance();
        if (kind == EntryKind.PENDING) {
            return normal ? Change.of(account, 0, amount, 0) : Change.of(account, 0, 0, amount);
        }
        return normal ? Change.of(account, 0, 0, -amount) : Change.of(account, 0, -amount, 0);
    }

    /**
     * Binds {@link LedgerSql#WRITE_ENTRY} from parameter {@code first} on: the entry, its postings, its
     * balance changes.
     *
     * @return the index after the last parameter
     */
    private static int bind(
            PreparedStatement ps,
            int first,
            Draft draft,
            Instant postedAt,
            SortedMap<Long, Change> changes,
            Map<Long, Account> touched)
            throws SQLException {
        List<Line> lines = draft.lines();
        int n = lines.size();
        long[] accountIds = new long[n];
        String[] currencies = new String[n];
        String[] sides = new String[n];
        long[] amounts = new long[n];
        boolean[] pending = new boolean[n];
        for (int i = 0; i < n; i++) {
            Line l = lines.get(i);
            accountIds[i] = l.accountId();
            currencies[i] = l.amount().currency().code();
            sides[i] = l.side().dbValue();
            amounts[i] = l.amount().minorUnits();
            pending[i] = l.pending();
        }
        // ascending account id, unsharded and sharded apart
        Map<Long, Change> single = new TreeMap<>();
        Map<Long, Change> sharded = new TreeMap<>();
        changes.forEach((id, change) -> (account(touched, id).isSharded() ? sharded : single).put(id, change));
        int[] shardCounts = sharded.keySet().stream()
                .mapToInt(id -> account(touched, id).shards())
                .toArray();
        // Java arrays, which pgjdbc sends in binary, instead of java.sql.Arrays built by createArrayOf, whose
        // text literals the JVM escapes and the server parses again
        int index = first;
        ps.setString(index++, draft.kind().dbValue());
        Jdbc.setNullableLong(ps, index++, draft.originalEntryId());
        Jdbc.setNullableText(ps, index++, draft.externalRef());
        ps.setString(index++, draft.description());
        Jdbc.setInstant(ps, index++, postedAt);
        ps.setObject(index++, accountIds);
        ps.setObject(index++, currencies);
        ps.setObject(index++, sides);
        ps.setObject(index++, amounts);
        ps.setObject(index++, pending);
        for (Map<Long, Change> group : List.of(single, sharded)) {
            int size = group.size();
            long[] ids = new long[size];
            long[] available = new long[size];
            long[] increase = new long[size];
            long[] decrease = new long[size];
            int i = 0;
            for (Map.Entry<Long, Change> e : group.entrySet()) {
                ids[i] = e.getKey();
                available[i] = e.getValue().available().minorUnits();
                increase[i] = e.getValue().increase().minorUnits();
                decrease[i] = e.getValue().decrease().minorUnits();
                i++;
            }
            ps.setObject(index++, ids);
            ps.setObject(index++, available);
            ps.setObject(index++, increase);
            ps.setObject(index++, decrease);
        }
        ps.setObject(index++, shardCounts);
        return index;
    }

    /**
     * The new entry's id from the result of {@link LedgerSql#WRITE_ENTRY}, or {@code null} when a unique rule
     * kept it out (nothing was written).
     *
     * @throws BalanceFloorException when an account's floor refused the entry
     */
    private static @Nullable Long entryId(
            Connection c, ResultSet rs, SortedMap<Long, Change> changes, Map<Long, Account> touched)
            throws SQLException {
        rs.next();
        long entryId = rs.getLong("entry_id");
        if (rs.wasNull()) {
            return null;
        }
        Array refused = rs.getArray("refused");
        if (refused != null) {
            long accountId = ((Number) ((Object[]) refused.getArray())[0]).longValue();
            throw floorCrossed(
                    c,
                    account(touched, accountId),
                    Objects.requireNonNull(changes.get(accountId), "the refused account is one the entry changes"));
        }
        return entryId;
    }

    private static RuntimeException floorCrossed(Connection c, Account account, Change change) throws SQLException {
        Long floor = account.floorMinorUnits();
        if (floor == null) {
            return new LedgerStorageException("the balance row of account " + account.id() + " is missing", null, null);
        }
        List<Long> unreserved = LedgerReader.longs(c, LedgerSql.SHARD_UNRESERVED, account.id(), 0);
        BalanceFloorException refused = new BalanceFloorException(
                account.id(),
                Money.of(floor, account.currency()),
                Money.of(unreserved.isEmpty() ? 0 : unreserved.get(0), account.currency()),
                change.unreserved());
        abortTransaction(c);
        return refused;
    }

    /**
     * The write function answers a refused floor after it wrote the entry, its postings and the other accounts'
     * balance rows: the refused entry is half written in the caller's transaction. That transaction is put in
     * the failed state here, so that it can only roll back: a caller that caught the refusal and committed
     * committed the half entry, its postings no longer matching the balance rows.
     */
    private static void abortTransaction(Connection c) throws SQLException {
        if (c.getAutoCommit()) {
            return; // the write ran in a transaction of its own, which the refusal rolls back
        }
        try (java.sql.Statement s = c.createStatement()) {
            s.execute("DO $$BEGIN RAISE EXCEPTION 'a balance floor refused a ledger entry of this transaction, which "
                    + "is half written: roll the transaction back' USING ERRCODE = 'LG009'; END$$");
        } catch (SQLException expected) {
            if (!"LG009".equals(expected.getSQLState())) {
                throw expected;
            }
        }
    }

    /**
     * After a unique conflict: the entry holding the external reference when it is the one requested
     * (a retried write), else the refusal that names the rule and the entry that got there first.
     */
    private JournalEntry existing(Connection c, Draft draft) throws SQLException {
        String externalRef = draft.externalRef();
        if (externalRef != null) {
            Optional<JournalEntry> holder = reader.entryByExternalRef(c, externalRef);
            if (holder.isPresent()) {
                Optional<String> difference = difference(draft, holder.get());
                if (difference.isPresent()) {
                    throw new LedgerConflictException(externalRef, holder.get(), difference.get());
                }
                return holder.get();
            }
        }
        Long original = draft.originalEntryId();
        if (draft.kind() == EntryKind.REVERSAL && original != null) {
            Optional<Long> existing = firstId(c, LedgerSql.REVERSAL_OF, original);
            if (existing.isPresent()) {
                throw new DuplicateEntryException(
                        DuplicateEntryException.Reason.ALREADY_REVERSED,
                        existing.get(),
                        "entry " + original + " is reversed by entry " + existing.get());
            }
        }
        if ((draft.kind() == EntryKind.CAPTURE || draft.kind() == EntryKind.VOID) && original != null) {
            Optional<Long> existing = firstId(c, LedgerSql.RESOLUTION_OF, original);
            if (existing.isPresent()) {
                boolean captured = requireEntry(c, existing.get()) == EntryKind.CAPTURE;
                throw new DuplicateEntryException(
                        captured
                                ? DuplicateEntryException.Reason.ALREADY_CAPTURED
                                : DuplicateEntryException.Reason.ALREADY_VOIDED,
                        existing.get(),
                        "pending entry " + original + " is " + (captured ? "captured" : "voided") + " by entry "
                                + existing.get());
            }
        }
        // the conflicting row is not visible to this transaction's snapshot (stricter isolation)
        throw new SQLException("entry conflicted with one this transaction can't see", "40001");
    }

    /**
     * How a stored entry differs from a draft in what it does: kind, link, or lines compared as a
     * multiset of (account, side, amount with currency, pending or not), so their order does not matter.
     * The description is free text and not compared.
     */
    private static Optional<String> difference(Draft draft, JournalEntry stored) {
        if (draft.kind() != stored.kind()) {
            return Optional.of(
                    "kind " + stored.kind().dbValue() + ", not " + draft.kind().dbValue());
        }
        if (!Objects.equals(draft.originalEntryId(), stored.originalEntryId())) {
            return Optional.of("linked to entry " + stored.originalEntryId() + ", not " + draft.originalEntryId());
        }
        List<String> requested = draft.lines().stream().map(Line::key).sorted().toList();
        List<String> existing = stored.postings().stream()
                .map(p -> new Line(p.accountId(), p.side(), p.amount(), p.pending()).key())
                .sorted()
                .toList();
        if (!requested.equals(existing)) {
            return Optional.of("postings " + existing + ", not " + requested);
        }
        return Optional.empty();
    }

    private static Optional<Long> firstId(Connection c, String sql, Object key) throws SQLException {
        return LedgerReader.longs(c, sql, key).stream().findFirst();
    }

    private static EntryKind requireEntry(Connection c, long entryId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(LedgerSql.ENTRY_KIND)) {
            ps.setLong(1, entryId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw unknownEntry(entryId);
                }
                return EntryKind.fromDb(rs.getString(1));
            }
        }
    }

    private static LedgerValidationException invalid(String message) {
        return new LedgerValidationException(Reason.INVALID_ENTRY, message);
    }

    private static LedgerValidationException unknownEntry(long entryId) {
        return new LedgerValidationException(Reason.UNKNOWN_ENTRY, "no entry with id " + entryId);
    }
}
