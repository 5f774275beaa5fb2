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
 * <h2>Balances</h2>
 * {@link #balance(long)} is the current balance from the balance rows; {@link #balance(long, Instant)}
 * recomputes it from the postings up to a ledger time (indexed by account and time). Both are on the
 * account's normal side: a credit-normal customer account with 10.00 owed to the customer shows
 * {@code +10.00}.
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
     * @throws BalanceFloorException when an account would go below its floor (roll back)
     */
    public JournalEntry post(Connection connection, EntryRequest request) {
        return Jdbc.inCallersTransaction(connection, c -> writer.post(c, request));
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

    /** The current normal-side balance of an account, read in the caller's transaction. */
    public Money balance(Connection connection, long accountId) {
        return Jdbc.onConnection(connection, c -> reader.balance(c, accountId));
    }

    /** The current normal-side balance of an account (the sum of its balance rows). */
    public Money balance(long accountId) {
        return Jdbc.read(dataSource, c -> reader.balance(c, accountId));
    }

    /** The normal-side balance of an account from its postings with a ledger time at or before {@code asOf}. */
    public Money balance(long accountId, Instant asOf) {
        return Jdbc.read(dataSource, c -> reader.balance(c, accountId, asOf));
    }

    /** The trial balance of the current balances. */
    public TrialBalance trialBalance() {
        return Jdbc.read(dataSource, c -> reader.trialBalance(c, null));
    }

    /** The trial balance from the postings with a ledger time at or before {@code asOf}. */
    public TrialBalance trialBalance(Instant asOf) {
        return Jdbc.read(dataSource, c -> reader.trialBalance(c, asOf));
    }
}
