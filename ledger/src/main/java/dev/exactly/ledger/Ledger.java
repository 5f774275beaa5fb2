package dev.exactly.ledger;

import dev.exactly.ledger.internal.AccountDirectory;
import dev.exactly.ledger.internal.EntryWriter;
import dev.exactly.ledger.internal.Jdbc;
import dev.exactly.ledger.internal.LedgerReader;
import java.sql.Connection;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A double-entry ledger on PostgreSQL (tables from {@link LedgerSchema}).
 *
 * <h2>Writing inside the caller's transaction</h2>
 * Methods that take a {@link Connection} run in whatever transaction it has and never commit or roll
 * back, so a payment service can write its charge row, the journal entry and its idempotency record in
 * one transaction. If such a method throws, the caller must roll back. (Given a connection in
 * auto-commit mode, a write runs in a transaction of its own on it, since an entry takes more than one
 * statement.) Methods without a connection run in a transaction of their own on the ledger's
 * {@link DataSource}.
 *
 * <h2>What a posted entry guarantees</h2>
 * <ul>
 *   <li>At least two postings, Σdebits = Σcredits per currency, each posting in its account's currency:
 *       checked in Java first, and again by the database at commit (a deferred constraint trigger), so
 *       even a writer that bypasses this class can't commit an unbalanced entry.</li>
 *   <li>Entries, postings and accounts are immutable (triggers refuse UPDATE, DELETE and TRUNCATE);
 *       corrections are new entries: {@link #reverse} or a refund linked to the original.</li>
 *   <li>An optional external reference is unique, so a business event is journaled once even by racing
 *       writers. Writing with a reference is idempotent: when an entry with the reference exists and does
 *       the same (kind, link to an original, postings), the write returns that entry and changes nothing;
 *       when it does something else, the write is refused with {@link LedgerConflictException}. Of two
 *       racing writers of one reference, the second waits for the first to commit (the unique index), then
 *       gets the first's entry or the conflict; if the first rolls back, the second writes.</li>
 *   <li>Balance floors hold under concurrency: the balance rows an entry touches are locked with
 *       {@code SELECT ... FOR UPDATE} in ascending (account id, shard) order in the writing transaction,
 *       so there are no deadlocks between entries, and the floor is checked under that lock
 *       ({@link BalanceFloorException}).</li>
 * </ul>
 *
 * <h2>Hot accounts</h2>
 * Every charge touches the processor clearing account. Its balance would be one row that each charge
 * locks from its update until its commit, so all charges would queue on it. Open such an account with
 * {@link AccountSpec#withShards(int) shards}: its balance is spread over N rows and each entry updates
 * one of them, the first no other transaction holds ({@code SKIP LOCKED}, starting from
 * {@code entry id mod N}), waiting only when all N are held; so N charges proceed at once. Its balance is
 * the sum of the rows. Sharded accounts have no floor (there is no single row to lock), which suits
 * system accounts. Postings carry no foreign key to the account row either, so no charge takes even a
 * share lock on it.
 *
 * <h2>Two-phase entries (authorize, then capture or void)</h2>
 * {@link #hold} writes a {@link EntryKind#PENDING pending entry}: its postings reserve amounts on both
 * sides without changing any available balance (they count in the accounts' pending amounts). It is
 * then resolved once, by a new entry linked to it:
 * <ul>
 *   <li>{@link #capture} (in full, an amount, or named postings): releases everything held and posts
 *       what was captured, at most what was held per account and side; a partial capture thus posts the
 *       captured amount and releases the rest;</li>
 *   <li>{@link #voidHold}: releases everything held and posts nothing.</li>
 * </ul>
 * A unique index lets one capture or void exist per pending entry, so a hold is never both captured and
 * voided, nor captured twice, even by racing writers: the loser gets {@link DuplicateEntryException}
 * ({@code ledger_already_captured} or {@code ledger_already_voided}) naming the winner, or, retrying
 * with the winner's external reference, the winner's entry. Entries stay immutable: the state of a hold
 * ({@link #pendingHold}) is derived from whether its resolution exists, so the history of every hold is
 * in the journal and point-in-time balances see holds as they were. Pending amounts balance per currency
 * by themselves (checked at commit, like every entry), so the trial balance balances at every instant
 * for available balances and pending amounts alike. A floor bounds the available balance less what open
 * holds may take from it, so a hold reserves funds. Expired holds are found with {@link #lockOpenHolds}
 * ({@code FOR UPDATE SKIP LOCKED}, so several workers share them) and voided in the same transaction.
 *
 * <h2>Balances</h2>
 * {@link #balance(long)} is the current available balance from the balance rows; {@link #balance(long,
 * Instant)} recomputes it from the postings up to a ledger time (indexed by account and time).
 * {@link #balances(long)} adds the pending amounts of open holds. All are on the account's normal side:
 * a credit-normal customer account with 10.00 owed to the customer shows {@code +10.00}.
 */
public final class Ledger {

    /** How many accounts are cached by id before the cache is cleared. */
    public static final int ACCOUNT_CACHE_SIZE = 100_000;

    private final DataSource dataSource;
    private final InstantSource clock;
    private final AccountDirectory accounts;
    private final LedgerReader reader;
    private final EntryWriter writer;

    private Ledger(DataSource dataSource, InstantSource clock) {
        this.dataSource = dataSource;
        this.clock = clock;
        this.accounts = new AccountDirectory(ACCOUNT_CACHE_SIZE);
        this.reader = new LedgerReader(accounts);
        this.writer = new EntryWriter(accounts, reader, clock);
    }

    /** A ledger on {@code dataSource} stamping entries with the system clock. */
    public static Ledger of(DataSource dataSource) {
        return new Ledger(dataSource, InstantSource.system());
    }

    /** A ledger on {@code dataSource} stamping entries and accounts with {@code clock}. */
    public static Ledger of(DataSource dataSource, InstantSource clock) {
        return new Ledger(dataSource, clock);
    }

    // ---------------------------------------------------------------- accounts

    /**
     * Opens an account, or returns the existing account with the same code when it matches the spec
     * (so opening is idempotent, also under a race); does not commit.
     *
     * @throws AccountConflictException when the code exists with a different spec
     */
    public Account openAccount(Connection connection, AccountSpec spec) {
        return Jdbc.onConnection(connection, c -> accounts.open(c, spec, clock.instant()));
    }

    /** {@link #openAccount(Connection, AccountSpec)} in a transaction of its own. */
    public Account openAccount(AccountSpec spec) {
        return Jdbc.inTransaction(dataSource, c -> accounts.open(c, spec, clock.instant()));
    }

    /** The account with this id. */
    public Optional<Account> account(long accountId) {
        return Jdbc.read(dataSource, c -> accounts.find(c, accountId));
    }

    /** The account with this code. */
    public Optional<Account> account(String code) {
        return Jdbc.read(dataSource, c -> accounts.findByCode(c, code));
    }

    // ---------------------------------------------------------------- writing

    /**
     * Posts an entry inside the caller's transaction; does not commit. Idempotent by external reference:
     * if an entry with the request's reference exists (committed, or written earlier in this transaction)
     * and has the same kind, original entry and postings (compared as a multiset of account, side and
     * amount; the description is not compared), that entry is returned and nothing is written.
     *
     * @return the entry as stored: the new one, or the existing one with the same reference
     * @throws LedgerValidationException for an unknown account or currency mismatch (the request itself
     *     was validated when it was built), or an unknown original entry
     * @throws LedgerConflictException when the external reference belongs to an entry that differs
     *     (nothing was written; the transaction is still usable)
     * @throws BalanceFloorException when an account would go below its floor: the transaction is left failed
     *     (it can only roll back, a commit commits nothing)
     */
    public JournalEntry post(Connection connection, EntryRequest request) {
        return Jdbc.inCallersTransaction(connection, c -> writer.post(c, request));
    }

    /**
     * {@link #post(Connection, EntryRequest)} as a statement the caller sends with its own in one round trip
     * (see {@link EntryWrite}); the request is validated against its accounts now, on {@code connection}.
     */
    public EntryWrite preparePost(Connection connection, EntryRequest request) {
        return Jdbc.onConnection(connection, c -> writer.preparePost(c, request));
    }

    /** {@link #hold(Connection, EntryRequest)} as a statement the caller sends with its own (see {@link EntryWrite}). */
    public EntryWrite prepareHold(Connection connection, EntryRequest request) {
        return Jdbc.onConnection(connection, c -> writer.prepareHold(c, request));
    }

    /**
     * {@link #preparePost(Connection, EntryRequest)} before the caller has a connection. Nothing is read when
     * the ledger knows the accounts already (it keeps those it has read) and the request names no
     * original entry, the rule for a charge's entry; otherwise they are read on a pooled connection.
     */
    public EntryWrite preparePost(EntryRequest request) {
        return writer.preparePostKnown(request)
                .orElseGet(() -> Jdbc.inTransaction(dataSource, c -> writer.preparePost(c, request)));
    }

    /** {@link #prepareHold(Connection, EntryRequest)} before the caller has a connection (see {@link #preparePost(EntryRequest)}). */
    public EntryWrite prepareHold(EntryRequest request) {
        return writer.prepareHoldKnown(request)
                .orElseGet(() -> Jdbc.inTransaction(dataSource, c -> writer.prepareHold(c, request)));
    }

    /** {@link #post(Connection, EntryRequest)} in a transaction of its own. */
    public JournalEntry post(EntryRequest request) {
        return Jdbc.inTransaction(dataSource, c -> writer.post(c, request));
    }

    /**
     * Posts the reversal of an entry (its mirror image, linked to it) inside the caller's transaction;
     * does not commit. An entry is reversed at most once. With a reference, a retried reversal returns
     * the existing reversal (see {@link #post(Connection, EntryRequest)}).
     *
     * @param externalRef a unique reference for the reversal, or {@code null}
     * @throws DuplicateEntryException when the entry is already reversed by another entry than the one
     *     holding {@code externalRef} (for instance by one without a reference)
     * @throws LedgerConflictException when the reference belongs to an entry that is not this reversal
     * @throws BalanceFloorException when undoing the entry would take an account below its floor
     */
    public JournalEntry reverse(Connection connection, long entryId, @Nullable String externalRef, String description) {
        return Jdbc.inCallersTransaction(connection, c -> writer.reverse(c, entryId, externalRef, description));
    }

    /** {@link #reverse(Connection, long, String, String)} in a transaction of its own. */
    public JournalEntry reverse(long entryId, @Nullable String externalRef, String description) {
        return Jdbc.inTransaction(dataSource, c -> writer.reverse(c, entryId, externalRef, description));
    }

    // ---------------------------------------------------------------- two-phase entries

    /**
     * Writes the postings of {@code request} as a pending entry (a hold) inside the caller's transaction;
     * does not commit. The amounts count in the accounts' pending amounts ({@link #balances}), not in
     * their available balances; a held decrease counts against the account's floor. Idempotent by
     * external reference like {@link #post(Connection, EntryRequest)}.
     *
     * @param request a standard entry ({@link EntryRequest#builder()}): the postings to hold
     * @return the {@link EntryKind#PENDING} entry, its postings marked {@link Posting#pending()}
     * @throws BalanceFloorException when a held decrease would take an account below its floor: the
     *     transaction is left failed (it can only roll back)
     * @throws LedgerConflictException when the external reference belongs to an entry that differs
     */
    public JournalEntry hold(Connection connection, EntryRequest request) {
        return Jdbc.inCallersTransaction(connection, c -> writer.hold(c, request));
    }

    /** {@link #hold(Connection, EntryRequest)} in a transaction of its own. */
    public JournalEntry hold(EntryRequest request) {
        return Jdbc.inTransaction(dataSource, c -> writer.hold(c, request));
    }

    /**
     * Captures all of a pending entry inside the caller's transaction; does not commit: releases what it
     * holds and posts the same postings.
     *
     * @param externalRef a unique reference for the capture (a retry with it gets the capture back), or
     *     {@code null}
     * @return the {@link EntryKind#CAPTURE} entry: the posted lines, then the pending lines that release
     *     the hold
     * @throws DuplicateEntryException when the hold is captured or voided already by another entry
     *     ({@code ledger_already_captured}, {@code ledger_already_voided}; the transaction stays usable)
     * @throws LedgerValidationException when the entry does not exist or is not a pending entry
     * @throws LedgerConflictException when the external reference belongs to an entry that differs
     */
    public JournalEntry capture(
            Connection connection, long pendingEntryId, @Nullable String externalRef, String description) {
        return Jdbc.inCallersTransaction(
                connection, c -> writer.captureAll(c, pendingEntryId, externalRef, description));
    }

    /** {@link #capture(Connection, long, String, String)} in a transaction of its own. */
    public JournalEntry capture(long pendingEntryId, @Nullable String externalRef, String description) {
        return Jdbc.inTransaction(dataSource, c -> writer.captureAll(c, pendingEntryId, externalRef, description));
    }

    /**
     * Captures {@code amount} (at most what is held) of a pending entry of one debit and one credit, such
     * as an authorized card payment, inside the caller's transaction; does not commit: posts
     * {@code amount} on both of its lines and releases the whole hold (so the rest is released).
     *
     * @throws LedgerValidationException when the hold has other than one debit and one credit
     *     ({@code ledger_invalid_entry}), or {@code amount} exceeds it ({@code ledger_invalid_amount})
     * @throws DuplicateEntryException when the hold is captured or voided already by another entry
     * @see #capture(Connection, long, String, String)
     */
    public JournalEntry capture(
            Connection connection,
            long pendingEntryId,
            Money amount,
            @Nullable String externalRef,
            String description) {
        return Jdbc.inCallersTransaction(
                connection, c -> writer.capture(c, pendingEntryId, amount, externalRef, description));
    }

    /** {@link #capture(Connection, long, Money, String, String)} in a transaction of its own. */
    public JournalEntry capture(long pendingEntryId, Money amount, @Nullable String externalRef, String description) {
        return Jdbc.inTransaction(dataSource, c -> writer.capture(c, pendingEntryId, amount, externalRef, description));
    }

    /**
     * Captures a pending entry by naming the postings to post inside the caller's transaction; does not
     * commit: each must be on an account and side the hold holds, at most the amount held there, and they
     * must balance per currency. Releases the whole hold.
     *
     * @throws LedgerValidationException when a posting was not held or exceeds what was held
     * @throws DuplicateEntryException when the hold is captured or voided already by another entry
     * @see #capture(Connection, long, String, String)
     */
    public JournalEntry capture(
            Connection connection,
            long pendingEntryId,
            List<PostingRequest> postings,
            @Nullable String externalRef,
            String description) {
        return Jdbc.inCallersTransaction(
                connection, c -> writer.capture(c, pendingEntryId, postings, externalRef, description));
    }

    /** {@link #capture(Connection, long, List, String, String)} in a transaction of its own. */
    public JournalEntry capture(
            long pendingEntryId, List<PostingRequest> postings, @Nullable String externalRef, String description) {
        return Jdbc.inTransaction(
                dataSource, c -> writer.capture(c, pendingEntryId, postings, externalRef, description));
    }

    /**
     * Voids a pending entry inside the caller's transaction; does not commit: releases everything it
     * holds and posts nothing.
     *
     * @param externalRef a unique reference for the void (a retry with it gets the void back), or
     *     {@code null}
     * @return the {@link EntryKind#VOID} entry (pending lines only)
     * @throws DuplicateEntryException when the hold is captured or voided already by another entry
     * @throws LedgerValidationException when the entry does not exist or is not a pending entry
     */
    public JournalEntry voidHold(
            Connection connection, long pendingEntryId, @Nullable String externalRef, String description) {
        return Jdbc.inCallersTransaction(connection, c -> writer.voidHold(c, pendingEntryId, externalRef, description));
    }

    /** {@link #voidHold(Connection, long, String, String)} in a transaction of its own. */
    public JournalEntry voidHold(long pendingEntryId, @Nullable String externalRef, String description) {
        return Jdbc.inTransaction(dataSource, c -> writer.voidHold(c, pendingEntryId, externalRef, description));
    }

    /**
     * Open holds written before {@code postedBefore}, oldest first, at most {@code limit}, each locked
     * for the caller's transaction ({@code FOR UPDATE SKIP LOCKED}): holds another transaction is
     * capturing or voiding, or has locked by this method, are skipped, so several workers share the
     * expired holds without waiting for each other. Void them with
     * {@link #voidHold(Connection, long, String, String)} in the same transaction and commit; a lock
     * ends with the transaction. Void one hold per transaction (limit 1) to keep the balance-row lock
     * order of every transaction ascending; with more, a worker may meet a deadlock
     * ({@link LedgerRetryableException}) against writers touching the same accounts.
     *
     * @throws LedgerValidationException when {@code limit} is not between 1 and {@value EntryQuery#MAX_LIMIT},
     *     or the connection is in auto-commit mode (its locks would end with the statement)
     */
    public List<JournalEntry> lockOpenHolds(Connection connection, Instant postedBefore, int limit) {
        if (limit < 1 || limit > EntryQuery.MAX_LIMIT) {
            throw new LedgerValidationException(
                    LedgerValidationException.Reason.INVALID_ENTRY,
                    "limit must be between 1 and " + EntryQuery.MAX_LIMIT);
        }
        return Jdbc.onConnection(connection, c -> {
            if (c.getAutoCommit()) {
                throw new LedgerValidationException(
                        LedgerValidationException.Reason.INVALID_ENTRY,
                        "lockOpenHolds needs the caller's transaction: in auto-commit mode its locks would end with the statement");
            }
            return reader.lockOpenHolds(c, postedBefore, limit);
        });
    }

    /**
     * A pending entry and its capture or void if one is visible to the caller's transaction.
     *
     * @return empty when no entry has this id
     * @throws LedgerValidationException when the entry is not a pending entry
     */
    public Optional<PendingHold> pendingHold(Connection connection, long pendingEntryId) {
        return Jdbc.onConnection(connection, c -> reader.pendingHold(c, pendingEntryId));
    }

    /** {@link #pendingHold(Connection, long)} on a connection of its own. */
    public Optional<PendingHold> pendingHold(long pendingEntryId) {
        return Jdbc.read(dataSource, c -> reader.pendingHold(c, pendingEntryId));
    }

    // ---------------------------------------------------------------- reading entries

    /** The entry with this id, read in the caller's transaction. */
    public Optional<JournalEntry> entry(Connection connection, long entryId) {
        return Jdbc.onConnection(connection, c -> reader.entry(c, entryId));
    }

    /** The entry with this id. */
    public Optional<JournalEntry> entry(long entryId) {
        return Jdbc.read(dataSource, c -> reader.entry(c, entryId));
    }

    /** The entry with this external reference, read in the caller's transaction. */
    public Optional<JournalEntry> entryByExternalRef(Connection connection, String externalRef) {
        return Jdbc.onConnection(connection, c -> reader.entryByExternalRef(c, externalRef));
    }

    /** The entry with this external reference. */
    public Optional<JournalEntry> entryByExternalRef(String externalRef) {
        return Jdbc.read(dataSource, c -> reader.entryByExternalRef(c, externalRef));
    }

    /** The reversal, refunds and adjustments linked to an entry, in id order. */
    public List<JournalEntry> linkedEntries(long originalEntryId) {
        return Jdbc.read(dataSource, c -> reader.linkedEntries(c, originalEntryId));
    }

    /** A page of entries in id order (keyset pagination), optionally only those touching one account. */
    public EntryPage entries(EntryQuery query) {
        return Jdbc.read(dataSource, c -> reader.entries(c, query));
    }

    // ---------------------------------------------------------------- balances

    /** The current normal-side available balance and pending amounts of an account, read in the caller's transaction. */
    public AccountBalance balances(Connection connection, long accountId) {
        return Jdbc.onConnection(connection, c -> reader.balances(c, accountId));
    }

    /** The current normal-side available balance and pending amounts of an account (sums of its balance rows). */
    public AccountBalance balances(long accountId) {
        return Jdbc.read(dataSource, c -> reader.balances(c, accountId));
    }

    /**
     * The normal-side available balance and pending amounts of an account from its postings with a ledger
     * time at or before {@code asOf}: holds written by then and not yet released by then.
     */
    public AccountBalance balances(long accountId, Instant asOf) {
        return Jdbc.read(dataSource, c -> reader.balances(c, accountId, asOf));
    }

    /** The current normal-side available balance of an account, read in the caller's transaction. */
    public Money balance(Connection connection, long accountId) {
        return Jdbc.onConnection(connection, c -> reader.balance(c, accountId));
    }

    /** The current normal-side available balance of an account (the sum of its balance rows); holds don't count. */
    public Money balance(long accountId) {
        return Jdbc.read(dataSource, c -> reader.balance(c, accountId));
    }

    /** The normal-side available balance of an account from its posted (not pending) postings up to {@code asOf}. */
    public Money balance(long accountId, Instant asOf) {
        return Jdbc.read(dataSource, c -> reader.balance(c, accountId, asOf));
    }

    /** The trial balance of the current available balances and pending amounts (one snapshot). */
    public TrialBalance trialBalance() {
        return Jdbc.read(dataSource, c -> reader.trialBalance(c, null));
    }

    /** The trial balance (available and pending) from the postings with a ledger time at or before {@code asOf}. */
    public TrialBalance trialBalance(Instant asOf) {
        return Jdbc.read(dataSource, c -> reader.trialBalance(c, asOf));
    }
}
