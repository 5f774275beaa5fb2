package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spi.LocalWaiters;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The durable idempotency store: records live in one PostgreSQL table (see {@link PostgresSchema}),
 * and each transition is one SQL statement.
 *
 * <h2>Guarantees</h2>
 * <ul>
 *   <li><b>PostgreSQL is the durable tier.</b> A record is as durable as the commit that wrote it (with
 *       {@code synchronous_commit=off}, a crash may lose acknowledged commits: leave it on).</li>
 *   <li><b>One owner per scope.</b> The scope key is the table's primary key, and a unique index holds at
 *       every isolation level: two transactions can never both insert, or both take over, one scope.
 *       A replay and a fresh key are a single statement: a plain read of a finished record by primary key (a
 *       replay takes no lock and writes nothing), else, in the same row, a call of the claim function of
 *       migration V10: an {@code INSERT ... ON CONFLICT DO NOTHING}. While more than three in four keys the
 *       store claimed lately were fresh, it sends that insert alone first (a fresh key is then that one
 *       statement, and a key with a record the insert, which changes nothing, and the read); while fewer than
 *       one in four were, the read alone first (a replay is then that one read, and any other key the read and
 *       the claim). Where the key is taken (in flight,
 *       expired, a lease to take over), that insert changes nothing and a second statement, V4's function,
 *       decides: an {@code INSERT ... ON CONFLICT (scope_key) DO UPDATE ... WHERE ... RETURNING} that also
 *       reads the row it did not change. Every write is one statement; never a read followed by a separate
 *       write. A
 *       serialization failure ({@code 40001}), unique violation ({@code 23505}) or deadlock means that
 *       another transaction owns the key; a claim on the store's own connection then runs once more
 *       to read the outcome.</li>
 *   <li><b>Shared statements under load.</b> While {@link PostgresStoreConfig#sharedStatementLanes()} claims of
 *       fresh keys (or, counted apart, completions) run on the store's own connections, the next ones queue, and
 *       the first in the queue runs up to {@link PostgresStoreConfig#maxSharedWrites()} of them as one statement
 *       and one commit ({@link Sql#claimShared()}, {@link Sql#completeShared()}): per key the same row, the same
 *       conditions, the same row rule, and every caller answered after the commit with its own result. A claim
 *       whose key is taken goes on alone with the statements above. See {@link Combiner} for what a failure of
 *       a shared statement does.</li>
 *   <li><b>Fencing.</b> {@link #complete}, {@link #release}, {@link #renew} and
 *       {@link #updateRecoveryPoint} apply only while the record is processing, unexpired and owned by
 *       the given token, and say whether they did.</li>
 *   <li><b>One clock.</b> Leases and expiry use the database's {@code statement_timestamp()}, so every
 *       instance agrees on when a lease ends.</li>
 *   <li><b>Fail closed.</b> Every {@link SQLException} (connection failure, server shutdown, the
 *       statement timeout, any other error) is reported as {@link StoreUnavailableException}.</li>
 *   <li><b>Push, not polling.</b> {@link #subscribe} marks the record in flight as waited for, and
 *       {@link #complete} and {@link #release} of a marked record issue {@code pg_notify(channel, scope_key)}
 *       in the same transaction, so the notification is delivered exactly when the change commits. Records
 *       nobody waits for notify nobody: a notifying transaction holds a database-wide lock through its
 *       commit, which would serialise every completion. Each store instance listens on one dedicated connection taken
 *       from the {@code DataSource} when the first subscriber arrives, and kept until {@link #close()}
 *       (size a pool for it; it must be a session, not a transaction-pooled PgBouncer connection). After
 *       a lost connection the listener reconnects with backoff and wakes every waiter to re-read.</li>
 * </ul>
 *
 * <h2>Finishing inside the caller's transaction</h2>
 * The overloads that take a {@link Connection} run on the caller's connection and never commit, roll
 * back or change its auto-commit mode: business writes (a charge, a ledger entry) and the idempotency
 * record commit or roll back together. A finish that returns {@code false} means the caller lost its
 * lease: roll back. Their statements take the record's row lock, which is held until the caller's
 * transaction ends; concurrent claims of that key wait for it (up to their statement timeout). Keep
 * such transactions short, and set {@code idle_in_transaction_session_timeout} on those connections so
 * that a paused or abandoned transaction cannot hold a record forever. If such a statement fails, the
 * caller's transaction is usually aborted: roll it back.
 *
 * <h2>Housekeeping</h2>
 * Expired rows are ignored by every statement and deleted in bounded batches by
 * {@link #purgeExpired(int)} (several purgers may run at once); schedule {@link #purgeAllExpired(int)}.
 *
 * <p>Thread-safe. Connections come from the {@code DataSource} per operation (use a pool), run in
 * auto-commit mode, and are closed again.
 */
public final class PostgresIdempotencyStore implements IdempotencyStore {
    /** A claim that met a row inserted after its snapshot runs again; this often at most. */
    private static final int CLAIM_ATTEMPTS = 3;
    /** {@link #freshShare} of all keys fresh. */
    private static final int ONE = 1024;
    /** Above this {@link #freshShare} a claim sends the insert first. */
    private static final int FRESH_FIRST = ONE * 3 / 4;
    /** Below this {@link #freshShare} a claim sends the read of a finished record first. */
    private static final int READ_FIRST = ONE / 4;
    /** A shared completion takes no more records once their bodies add up to this. */
    private static final long MAX_SHARED_BODY_BYTES = 1 << 20;

    private final DataSource dataSource;
    private final PostgresStoreConfig config;
    private final Sql sql;
    private final Jdbc jdbc;
    private final LocalWaiters waiters = new LocalWaiters();
    private final NotificationListener listener;
    /** Claims that ran again because the conflicting row was newer than their snapshot, or conflicted. */
    private final LongAdder claimRetries = new LongAdder();
    /**
     * The share of fresh keys among the keys claimed lately, in 1/{@value #ONE}: each claim moves it a sixteenth
     * of the way to {@value #ONE} (a key this store inserted) or to 0 (a key that had a record: finished, in
     * flight or expired). It decides the claim's first statement: above {@value #FRESH_FIRST} (three in four
     * fresh) the insert alone ({@link Sql#claimFreshFirst()}: a fresh key costs PostgreSQL about 63,000
     * instructions less than through {@link Sql#claim()}, a key with a record about 132,000 more and a second
     * statement); below {@value #READ_FIRST} (one in four) the read of a finished record alone ({@link
     * Sql#findFinished()}: a replay costs about 34,000 less since V12 packs the record, a key without a finished
     * record about 77,000 more and a second statement); else {@link Sql#claim()}, one statement for both. Updated
     * without synchronisation: a lost update only delays a switch by a claim.
     */
    private volatile int freshShare = ONE / 2;
    /** Claims of fresh keys sharing statements while more arrive than lanes run ({@link Combiner}); null: off. */
    private final @Nullable Combiner<ClaimWrite, @Nullable ClaimOutcome> claims;
    /** Completions on the store's connections sharing statements likewise; null: off. */
    private final @Nullable Combiner<CompleteWrite, Boolean> completions;

    private PostgresIdempotencyStore(DataSource dataSource, PostgresStoreConfig config) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.config = Objects.requireNonNull(config, "config");
        this.sql = Sql.forTable(config.tableName());
        this.jdbc = new Jdbc(config.statementTimeout());
        this.listener = new NotificationListener(dataSource, config, waiters);
        int lanes = config.sharedStatementLanes();
        this.claims = lanes == 0
                ? null
                : new Combiner<>(
                        lanes,
                        config.maxSharedWrites(),
                        w -> 0,
                        1,
                        w -> onOwnConnection(
                                "claim",
                                c -> claimOn(
                                        c, true, true, w.key(), w.fingerprint(), w.owner(), w.lease(), w.retention())),
                        this::claimShared,
                        e -> SqlFailures.unavailable("claim", e));
        this.completions = lanes == 0
                ? null
                : new Combiner<>(
                        lanes,
                        config.maxSharedWrites(),
                        w -> w.response().bodyLength(),
                        MAX_SHARED_BODY_BYTES,
                        w -> onOwnConnection(
                                "complete", c -> completeOn(c, w.key(), w.owner(), w.outcome(), w.response())),
                        this::completeShared,
                        e -> SqlFailures.unavailable("complete", e));
        applyLoginTimeout(dataSource, config.loginTimeout());
    }

    /** A store on the default table with the default settings. The table must exist (see {@link #migrate}). */
    public static PostgresIdempotencyStore create(DataSource dataSource) {
        return new PostgresIdempotencyStore(dataSource, PostgresStoreConfig.ofDefaults());
    }

    /** A store with {@code config}. The table must exist (see {@link PostgresSchema#migrate}). */
    public static PostgresIdempotencyStore create(DataSource dataSource, PostgresStoreConfig config) {
        return new PostgresIdempotencyStore(dataSource, config);
    }

    /**
     * Creates the default table if it is missing (see {@link PostgresSchema#migrate(DataSource)}).
     *
     * @return whether the table was created
     */
    public static boolean migrate(DataSource dataSource) {
        return PostgresSchema.migrate(dataSource);
    }

    public PostgresStoreConfig config() {
        return config;
    }

    // ---------------------------------------------------------------- the SPI, on the store's connections

    @Override
    public ClaimOutcome claim(
            ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
        requireClaimArguments(key, fingerprint, lease, retention);
        Objects.requireNonNull(owner, "owner");
        if (claims != null && freshShare > FRESH_FIRST) {
            // most keys lately were fresh: the insert first, shared with concurrent claims while lanes are busy
            ClaimOutcome outcome = claims.submit(new ClaimWrite(key, fingerprint, owner, lease, retention));
            if (outcome != null) {
                return outcome;
            }
            // the key is taken: the claim's other statements decide
            return onOwnConnection("claim", c -> claimOn(c, true, false, key, fingerprint, owner, lease, retention));
        }
        return onOwnConnection("claim", c -> claimOn(c, true, true, key, fingerprint, owner, lease, retention));
    }

    /** {@inheritDoc} Signals this process's subscribers at once, and every other instance's by NOTIFY. */
    @Override
    public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        requireFinish(key, owner, outcome, response);
        boolean done = completions != null
                ? completions.submit(new CompleteWrite(key, owner, outcome, response))
                : onOwnConnection("complete", c -> completeOn(c, key, owner, outcome, response));
        if (done) {
            waiters.signal(key);
        }
        return done;
    }

    @Override
    public boolean release(ScopeKey key, OwnerToken owner) {
        requireOwner(key, owner);
        boolean done = onOwnConnection("release", c -> releaseOn(c, key, owner));
        if (done) {
            waiters.signal(key);
        }
        return done;
    }

    @Override
    public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
        requireOwner(key, owner);
        requirePositive(lease, "lease");
        return onOwnConnection("renew", c -> renewOn(c, key, owner, lease));
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopeKey key) {
        Objects.requireNonNull(key, "key");
        return onOwnConnection("find", c -> findOn(c, key, row -> record(row, key)));
    }

    /**
     * Registers in this process and marks the record in flight as waited for (one {@code UPDATE} of its
     * {@code waiters} flag the first time, none after), so that its completion or release sends a NOTIFY;
     * completions nobody waits for send none (a NOTIFY serialises commits). The mark is committed before
     * this returns: a change after it notifies, and a change before it is seen by the claim that follows
     * the subscription. The first subscription starts the listener connection, and every (re)connection of
     * it signals all subscribers so that none misses a change.
     */
    @Override
    public ChangeSubscription subscribe(ScopeKey key) {
        Objects.requireNonNull(key, "key");
        listener.ensureStarted();
        ChangeSubscription subscription = waiters.subscribe(key);
        try {
            onOwnConnection("subscribe", c -> jdbc.update(c, sql.markWaiting(), s -> s.setString(1, key.hash())));
        } catch (RuntimeException e) {
            subscription.close();
            throw e;
        }
        return subscription;
    }

    /** Stops the listener and returns its connection. Does not close the {@code DataSource}. */
    @Override
    public void close() {
        listener.close();
    }

    // ------------------------------------------------------------------- on the caller's connection

    /**
     * {@link #claim(ScopeKey, Fingerprint, Duration, Duration)} on the caller's connection, inside its
     * transaction: the new record commits (or rolls back) with the caller's other writes. The claim holds
     * the record's row lock until the caller's transaction ends.
     *
     * @throws StoreUnavailableException on any SQL failure; the caller's transaction is then aborted
     *                                   (a conflict under REPEATABLE READ or SERIALIZABLE included)
     */
    public ClaimOutcome claim(
            Connection connection, ScopeKey key, Fingerprint fingerprint, Duration lease, Duration retention) {
        requireClaimArguments(key, fingerprint, lease, retention);
        OwnerToken owner = OwnerToken.random();
        return onCallerConnection(
                "claim",
                connection,
                c -> claimOn(c, c.getAutoCommit(), true, key, fingerprint, owner, lease, retention));
    }

    /**
     * Finishes the owner's record on the caller's connection without committing. The business writes of
     * the same transaction and the record's final state become visible together; subscribers everywhere
     * (this process included) are notified when the caller commits, and never if it rolls back.
     *
     * @param outcome {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED}
     * @return false when {@code owner} no longer owns a processing record: roll the transaction back
     */
    public boolean complete(
            Connection connection, ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        requireFinish(key, owner, outcome, response);
        return onCallerConnection("complete", connection, c -> completeOn(c, key, owner, outcome, response));
    }

    /**
     * Deletes the owner's processing record on the caller's connection without committing; subscribers
     * are notified when the caller commits.
     *
     * @return false when {@code owner} no longer owns a processing record
     */
    public boolean release(Connection connection, ScopeKey key, OwnerToken owner) {
        requireOwner(key, owner);
        return onCallerConnection("release", connection, c -> releaseOn(c, key, owner));
    }

    /** {@link #renew(ScopeKey, OwnerToken, Duration)} on the caller's connection, without committing. */
    public boolean renew(Connection connection, ScopeKey key, OwnerToken owner, Duration lease) {
        requireOwner(key, owner);
        requirePositive(lease, "lease");
        return onCallerConnection("renew", connection, c -> renewOn(c, key, owner, lease));
    }

    /** {@link #find(ScopeKey)} on the caller's connection (it sees the caller's uncommitted writes). */
    public Optional<IdempotencyRecord> find(Connection connection, ScopeKey key) {
        Objects.requireNonNull(key, "key");
        return onCallerConnection("find", connection, c -> findOn(c, key, row -> record(row, key)));
    }

    /**
     * Records how far a multi-phase owner got (e.g. {@code "charge_created"}), fenced like every write,
     * on the caller's connection without committing. A takeover keeps the recovery point, so that the
     * new owner resumes where the old one stopped; a record that expired and is claimed afresh starts
     * without one.
     *
     * @return false when {@code owner} no longer owns a processing record: roll the transaction back
     */
    public boolean updateRecoveryPoint(Connection connection, ScopeKey key, OwnerToken owner, String recoveryPoint) {
        requireOwner(key, owner);
        Objects.requireNonNull(recoveryPoint, "recoveryPoint");
        return onCallerConnection(
                "recovery point",
                connection,
                c -> jdbc.update(c, sql.recoveryPoint(), s -> {
                            s.setString(1, recoveryPoint);
                            s.setString(2, key.hash());
                            s.setString(3, owner.value());
                        })
                        == 1);
    }

    /** The recovery point of an unexpired record, read on the caller's connection. */
    public Optional<String> findRecoveryPoint(Connection connection, ScopeKey key) {
        Objects.requireNonNull(key, "key");
        return onCallerConnection("find", connection, c -> findOn(c, key, row -> row.getString("recovery_point")));
    }

    /** The recovery point of an unexpired record. */
    public Optional<String> findRecoveryPoint(ScopeKey key) {
        Objects.requireNonNull(key, "key");
        return onOwnConnection("find", c -> findOn(c, key, row -> row.getString("recovery_point")));
    }

    // ---------------------------------------------------------- atomic phases (see AtomicPhases)

    /** A claim on the caller's connection that also reads what a phase committed before. */
    PhaseRow claimPhase(
            Connection connection,
            ScopeKey key,
            Fingerprint fingerprint,
            OwnerToken owner,
            Duration lease,
            Duration retention) {
        requireClaimArguments(key, fingerprint, lease, retention);
        Objects.requireNonNull(owner, "owner");
        return onCallerConnection("claim", connection, c -> {
            List<PhaseRow> rows = jdbc.query(
                    c,
                    sql.claimPhase(),
                    s -> bindClaim(s, 0, key, fingerprint, owner, micros(lease), micros(retention)),
                    row -> PhaseRow.of(row, claimOutcome(row, key)));
            if (rows.isEmpty()) {
                // inside a transaction the statement cannot simply run again: the caller's transaction retries
                throw new StoreUnavailableException(
                        "idempotency claim: the record of " + key
                                + " was committed by another transaction after this one's snapshot; retry",
                        null);
            }
            return rows.getFirst();
        });
    }

    boolean checkpoint(Connection connection, ScopeKey key, OwnerToken owner, String name, byte @Nullable [] state) {
        requireOwner(key, owner);
        return onCallerConnection(
                "checkpoint",
                connection,
                c -> jdbc.update(c, sql.checkpoint(), s -> {
                            s.setString(1, name);
                            s.setBytes(2, state);
                            s.setString(3, key.hash());
                            s.setString(4, owner.value());
                        })
                        == 1);
    }

    /** One more failed attempt; empty when the owner no longer holds the record. */
    Optional<RetryRow> retryLater(
            Connection connection, ScopeKey key, OwnerToken owner, String error, Duration delay, int maxAttempts) {
        requireOwner(key, owner);
        return onCallerConnection(
                "retry later",
                connection,
                c -> jdbc
                        .query(
                                c,
                                sql.retryLater(),
                                s -> {
                                    s.setString(1, error);
                                    s.setLong(2, Math.max(1, micros(delay)));
                                    s.setInt(3, maxAttempts);
                                    s.setString(4, key.hash());
                                    s.setString(5, owner.value());
                                },
                                row -> new RetryRow(
                                        row.getInt("attempts"),
                                        nullableInstant(row, "dead_lettered_at"),
                                        instant(row, "lease_expires_at")))
                        .stream()
                        .findFirst());
    }

    /** Recovery's batch: phases whose lease ran out, each under a fresh owner token. */
    List<PhaseRow> takeOverExpired(Connection connection, Duration lease, int batch) {
        requirePositive(lease, "lease");
        return onCallerConnection(
                "recovery takeover",
                connection,
                c -> jdbc.query(
                        c,
                        sql.takeOverExpired(),
                        s -> {
                            s.setInt(1, batch);
                            s.setLong(2, micros(lease));
                        },
                        row -> PhaseRow.of(row, new ClaimOutcome.Claimed(record(row, null), true))));
    }

    /** An operator's takeover of one dead-lettered (or abandoned) phase. */
    Optional<PhaseRow> takeOverOne(Connection connection, ScopeKey key, OwnerToken owner, Duration lease) {
        requireOwner(key, owner);
        requirePositive(lease, "lease");
        return onCallerConnection(
                "operator takeover",
                connection,
                c -> jdbc
                        .query(
                                c,
                                sql.takeOverOne(),
                                s -> {
                                    s.setString(1, owner.value());
                                    s.setLong(2, micros(lease));
                                    s.setString(3, key.hash());
                                },
                                row -> PhaseRow.of(row, new ClaimOutcome.Claimed(record(row, null), true)))
                        .stream()
                        .findFirst());
    }

    List<PhaseRow> phases(Connection connection, boolean deadLettered, int limit) {
        return onCallerConnection(
                "list phases",
                connection,
                c -> jdbc.query(
                        c,
                        sql.phases(),
                        s -> {
                            s.setBoolean(1, deadLettered);
                            s.setInt(2, limit);
                        },
                        row -> PhaseRow.of(row, outcomeAsFound(row, null))));
    }

    Optional<PhaseRow> findPhase(Connection connection, ScopeKey key) {
        Objects.requireNonNull(key, "key");
        return onCallerConnection(
                "find", connection, c -> findOn(c, key, row -> PhaseRow.of(row, outcomeAsFound(row, key))));
    }

    /** Runs {@code work} on a connection of the store's own, in auto-commit mode. */
    <T> T withOwnConnection(String operation, java.util.function.Function<Connection, T> work) {
        return onOwnConnection(operation, work::apply);
    }

    /** A record and what a phase keeps beside it. */
    record PhaseRow(
            ClaimOutcome outcome,
            @Nullable String checkpoint,
            byte @Nullable [] state,
            int attempts,
            @Nullable String lastError,
            @Nullable Instant deadLetteredAt) {
        static PhaseRow of(ResultSet row, ClaimOutcome outcome) throws SQLException {
            return new PhaseRow(
                    outcome,
                    row.getString("recovery_point"),
                    row.getBytes("checkpoint_state"),
                    row.getInt("attempts"),
                    row.getString("last_error"),
                    nullableInstant(row, "dead_lettered_at"));
        }
    }

    /** What {@link Sql#retryLater()} left: the attempts so far, and a dead letter or the next lease end. */
    record RetryRow(int attempts, @Nullable Instant deadLetteredAt, Instant leaseExpiresAt) {}

    private static ClaimOutcome outcomeAsFound(ResultSet row, @Nullable ScopeKey key) throws SQLException {
        IdempotencyRecord record = record(row, key);
        return record.status().isFinished() ? new ClaimOutcome.Finished(record) : new ClaimOutcome.InFlight(record);
    }

    // ------------------------------------------------------------------------------- housekeeping

    /**
     * Deletes at most {@code batchSize} expired records, oldest first, in one statement and one short
     * transaction. Rows locked by a concurrent purge or claim are skipped.
     *
     * @return how many were deleted; fewer than {@code batchSize} means none were left (or were locked)
     */
    public int purgeExpired(int batchSize) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batchSize must be positive");
        }
        return onOwnConnection("purge", c -> jdbc.update(c, sql.purge(), s -> s.setInt(1, batchSize)));
    }

    /**
     * Calls {@link #purgeExpired(int)} until a batch comes back short, so that no transaction deletes
     * more than {@code batchSize} rows.
     *
     * @return how many were deleted in all
     */
    public long purgeAllExpired(int batchSize) {
        long total = 0;
        int deleted;
        do {
            deleted = purgeExpired(batchSize);
            total += deleted;
        } while (deleted == batchSize);
        return total;
    }

    /** Whether the listener connection is established and LISTENing (for health indicators). */
    public boolean isListening() {
        return listener.isListening();
    }

    NotificationListener listener() {
        return listener;
    }

    /** For tests: whether anybody in this process waits for {@code key}. */
    boolean hasLocalWaiters(ScopeKey key) {
        return waiters.hasWaiters(key);
    }

    /** For tests: how often a claim statement ran again. */
    long claimRetries() {
        return claimRetries.sum();
    }

    // ------------------------------------------------------------------------- the statements

    /**
     * @param retryConflicts whether a conflict runs the claim again (on the store's own connections)
     * @param insertFirst    whether the insert alone may go first (false: the caller just sent it)
     */
    private ClaimOutcome claimOn(
            Connection c,
            boolean retryConflicts,
            boolean insertFirst,
            ScopeKey key,
            Fingerprint fingerprint,
            OwnerToken owner,
            Duration lease,
            Duration retention)
            throws SQLException {
        long leaseMicros = micros(lease);
        long retentionMicros = micros(retention);
        SQLException conflict = null;
        int share = freshShare;
        boolean counted = false;
        if (share < READ_FIRST) {
            // most keys lately had a record: the read alone, and the claim below only for a key it does not find
            List<@Nullable IdempotencyRecord> finished = jdbc.query(
                    c,
                    sql.findFinished(),
                    s -> s.setString(1, key.hash()),
                    row -> PackedReplay.record(key, row.getBytes(1), row.getBytes(2)));
            @Nullable IdempotencyRecord record = finished.isEmpty() ? null : finished.getFirst();
            if (record != null) {
                count(false);
                return new ClaimOutcome.Finished(record);
            }
        } else if (insertFirst && share > FRESH_FIRST) {
            counted = true;
            // most keys lately were fresh: the insert alone, and the claim below only for a key that is taken
            try {
                List<Instant> created = jdbc.query(
                        c,
                        sql.claimFreshFirst(),
                        s -> {
                            bindClaim(s, 0, key, fingerprint, owner, leaseMicros, retentionMicros);
                            s.setLong(6, retentionMicros);
                            s.setLong(7, retentionMicros);
                        },
                        row -> Objects.requireNonNull(Timestamps.instant(row, 1), "created_at"));
                count(!created.isEmpty());
                if (!created.isEmpty()) {
                    return claimed(key, fingerprint, owner, created.getFirst(), leaseMicros, retentionMicros);
                }
            } catch (SQLException e) {
                if (!retryConflicts || !SqlFailures.isConflict(e)) {
                    throw e;
                }
                conflict = e;
            }
        }
        for (int attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
            if (attempt > 1) {
                claimRetries.increment();
            }
            try {
                // one row: a finished record, a fresh key's claim, or neither (the key is taken)
                List<@Nullable ClaimOutcome> read = jdbc.query(
                        c,
                        sql.claim(),
                        s -> {
                            bindClaim(s, 0, key, fingerprint, owner, leaseMicros, retentionMicros);
                            s.setString(6, key.hash());
                        },
                        row -> claimOutcome(row, key, fingerprint, owner, leaseMicros, retentionMicros));
                @Nullable ClaimOutcome first = read.getFirst();
                if (!counted && attempt == 1) {
                    count(first instanceof ClaimOutcome.Claimed);
                }
                if (first != null) {
                    return first;
                }
                List<ClaimOutcome> taken = jdbc.query(
                        c,
                        sql.claimPhase(),
                        s -> bindClaim(s, 0, key, fingerprint, owner, leaseMicros, retentionMicros),
                        row -> claimOutcome(row, key));
                if (!taken.isEmpty()) {
                    return taken.getFirst();
                }
                // the conflicting row committed after this statement's snapshot: run again to see it
            } catch (SQLException e) {
                if (!retryConflicts || !SqlFailures.isConflict(e)) {
                    throw e;
                }
                conflict = e;
            }
        }
        throw new StoreUnavailableException(
                "idempotency claim: the record of " + key + " kept changing during " + CLAIM_ATTEMPTS + " attempts",
                conflict);
    }

    /** A fresh key's claim, as {@link #claims} shares it. */
    private record ClaimWrite(
            ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {}

    /** A completion, as {@link #completions} shares it. */
    private record CompleteWrite(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {}

    /**
     * The inserts of several claims as one statement ({@link Sql#claimShared()}), on a connection of the store's
     * own: each write's claim, or null for a key that is taken (its caller goes on with the claim's other
     * statements, which count it).
     */
    private List<@Nullable ClaimOutcome> claimShared(List<ClaimWrite> writes) throws SQLException {
        List<ClaimWrite> sorted = new ArrayList<>(writes);
        sorted.sort(Comparator.comparing(w -> w.key().hash()));
        int n = sorted.size();
        String[] keys = new String[n];
        String[] fingerprints = new String[n];
        String[] owners = new String[n];
        long[] leases = new long[n];
        long[] retentions = new long[n];
        for (int i = 0; i < n; i++) {
            ClaimWrite w = sorted.get(i);
            keys[i] = w.key().hash();
            fingerprints[i] = w.fingerprint().encoded();
            owners[i] = w.owner().value();
            leases[i] = micros(w.lease());
            retentions[i] = micros(w.retention());
        }
        Map<String, Instant> created = new HashMap<>();
        withOwnConnection(c -> jdbc.query(
                c,
                sql.claimShared(),
                s -> {
                    s.setObject(1, keys);
                    s.setObject(2, fingerprints);
                    s.setObject(3, owners);
                    s.setObject(4, leases);
                    s.setObject(5, retentions);
                },
                row -> created.put(
                        row.getString(1) + ' ' + row.getString(2),
                        Objects.requireNonNull(Timestamps.instant(row, 3), "created_at"))));
        List<@Nullable ClaimOutcome> outcomes = new ArrayList<>(writes.size());
        for (ClaimWrite w : writes) {
            Instant at = created.get(w.key().hash() + ' ' + w.owner().value());
            if (at == null) {
                outcomes.add(null);
            } else {
                count(true);
                outcomes.add(
                        claimed(w.key(), w.fingerprint(), w.owner(), at, micros(w.lease()), micros(w.retention())));
            }
        }
        return outcomes;
    }

    /**
     * The completions of several owners as one statement ({@link Sql#completeShared()}), on a connection of the
     * store's own: whether each applied.
     */
    private List<Boolean> completeShared(List<CompleteWrite> writes) throws SQLException {
        List<CompleteWrite> sorted = new ArrayList<>(writes);
        sorted.sort(Comparator.comparing(w -> w.key().hash()));
        int n = sorted.size();
        List<String> headers = new ArrayList<>();
        String[] keys = new String[n];
        String[] owners = new String[n];
        String[] statuses = new String[n];
        int[] codes = new int[n];
        byte[][] bodies = new byte[n][];
        int[] first = new int[n];
        int[] last = new int[n];
        for (int i = 0; i < n; i++) {
            CompleteWrite w = sorted.get(i);
            String[] own = flatten(w.response().headers());
            first[i] = headers.size() + 1;
            headers.addAll(List.of(own));
            last[i] = headers.size();
            keys[i] = w.key().hash();
            owners[i] = w.owner().value();
            statuses[i] = w.outcome().name();
            codes[i] = w.response().status();
            bodies[i] = w.response().body();
        }
        Set<String> applied = new HashSet<>();
        withOwnConnection(c -> jdbc.query(
                c,
                sql.completeShared(),
                s -> {
                    s.setObject(1, headers.toArray(String[]::new));
                    s.setObject(2, keys);
                    s.setObject(3, owners);
                    s.setObject(4, statuses);
                    s.setObject(5, codes);
                    s.setObject(6, bodies);
                    s.setObject(7, first);
                    s.setObject(8, last);
                    s.setString(9, config.notificationChannel());
                },
                row -> applied.add(row.getString(1) + ' ' + row.getString(2))));
        List<Boolean> done = new ArrayList<>(writes.size());
        for (CompleteWrite w : writes) {
            done.add(applied.contains(w.key().hash() + ' ' + w.owner().value()));
        }
        return done;
    }

    /** For tests: claims waiting to share a statement now. */
    int claimsQueued() {
        return claims == null ? 0 : claims.queued();
    }

    /** For tests: completions waiting to share a statement now. */
    int completionsQueued() {
        return completions == null ? 0 : completions.queued();
    }

    /** For tests: claims and completions that went in shared statements. */
    long sharedWrites() {
        return (claims == null ? 0 : claims.shared()) + (completions == null ? 0 : completions.shared());
    }

    /** Counts a claim's key in {@link #freshShare}. */
    private void count(boolean fresh) {
        int now = freshShare;
        int next = fresh ? now + ((ONE - now) >> 4) : now - (now >> 4);
        if (next != now) {
            freshShare = next;
        }
    }

    /** For tests: makes the claim's first statement {@code first} ({@link #claimsFirst()}) until claims move it. */
    void claimFirst(String first) {
        freshShare = switch (first) {
            case "insert" -> FRESH_FIRST + (ONE - FRESH_FIRST) / 2;
            case "read" -> READ_FIRST / 2;
            default -> ONE / 2;
        };
    }

    /** For tests: the claim's first statement now: {@code "insert"}, {@code "read"} or {@code "claim"}. */
    String claimsFirst() {
        int share = freshShare;
        return share > FRESH_FIRST ? "insert" : share < READ_FIRST ? "read" : "claim";
    }

    /** The parameters of the claim function's call, after the first {@code before} of the statement. */
    private static void bindClaim(
            PreparedStatement s,
            int before,
            ScopeKey key,
            Fingerprint fingerprint,
            OwnerToken owner,
            long leaseMicros,
            long retentionMicros)
            throws SQLException {
        s.setString(before + 1, key.hash());
        s.setString(before + 2, fingerprint.encoded());
        s.setString(before + 3, owner.value());
        s.setLong(before + 4, leaseMicros);
        s.setLong(before + 5, retentionMicros);
    }

    private boolean completeOn(
            Connection c, ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response)
            throws SQLException {
        // a Java array goes to the driver as it is: sent in binary, without a java.sql.Array and its text literal
        String[] headers = flatten(response.headers());
        return jdbc.update(c, sql.completeCounted(), s -> {
                    s.setString(1, outcome.name());
                    s.setInt(2, response.status());
                    s.setObject(3, headers);
                    s.setBytes(4, response.body());
                    s.setString(5, key.hash());
                    s.setString(6, owner.value());
                    s.setString(7, config.notificationChannel());
                })
                == 1;
    }

    private boolean releaseOn(Connection c, ScopeKey key, OwnerToken owner) throws SQLException {
        return !jdbc.query(
                        c,
                        sql.release(),
                        s -> {
                            s.setString(1, key.hash());
                            s.setString(2, owner.value());
                            s.setString(3, config.notificationChannel());
                        },
                        row -> Boolean.TRUE)
                .isEmpty();
    }

    private boolean renewOn(Connection c, ScopeKey key, OwnerToken owner, Duration lease) throws SQLException {
        long leaseMicros = micros(lease);
        return jdbc.update(c, sql.renew(), s -> {
                    s.setLong(1, leaseMicros);
                    s.setLong(2, leaseMicros);
                    s.setString(3, key.hash());
                    s.setString(4, owner.value());
                })
                == 1;
    }

    private <T> Optional<T> findOn(Connection c, ScopeKey key, Jdbc.RowMapper<@Nullable T> mapper) throws SQLException {
        List<@Nullable T> rows = jdbc.query(c, sql.find(), s -> s.setString(1, key.hash()), mapper);
        return rows.isEmpty() ? Optional.empty() : Optional.ofNullable(rows.getFirst());
    }

    // ------------------------------------------------------------------------------- row mapping

    private static ClaimOutcome claimOutcome(ResultSet row, ScopeKey key) throws SQLException {
        IdempotencyRecord record = record(row, key);
        if (row.getBoolean("claimed")) {
            // a fresh or replaced record starts at 0 takeovers; only a takeover counts up
            return new ClaimOutcome.Claimed(record, row.getInt("takeovers") > 0);
        }
        return record.status().isFinished() ? new ClaimOutcome.Finished(record) : new ClaimOutcome.InFlight(record);
    }

    /**
     * The outcome of {@link Sql#claim()}'s row: a finished record; or a fresh key this claim inserted, the
     * caller's fingerprint and owner token, created at {@code claimed_at} with the lease and retention from
     * then (the times the insert wrote: a timestamp plus whole microseconds); or null when the key is taken.
     */
    private static @Nullable ClaimOutcome claimOutcome(
            ResultSet row,
            ScopeKey key,
            Fingerprint fingerprint,
            OwnerToken owner,
            long leaseMicros,
            long retentionMicros)
            throws SQLException {
        String status = row.getString(1);
        if (status != null) {
            return new ClaimOutcome.Finished(finishedRecord(row, key, status));
        }
        Instant created = Timestamps.instant(row, Sql.CLAIM_COLUMNS);
        if (created == null) {
            return null;
        }
        return claimed(key, fingerprint, owner, created, leaseMicros, retentionMicros);
    }

    /**
     * A fresh key this claim inserted: the caller's fingerprint and owner token, created at {@code created} with
     * the lease and retention from then (the times the insert wrote: a timestamp plus whole microseconds).
     */
    private static ClaimOutcome claimed(
            ScopeKey key,
            Fingerprint fingerprint,
            OwnerToken owner,
            Instant created,
            long leaseMicros,
            long retentionMicros) {
        return new ClaimOutcome.Claimed(
                new IdempotencyRecord(
                        key,
                        RecordStatus.PROCESSING,
                        fingerprint,
                        owner,
                        created,
                        created.plus(leaseMicros, ChronoUnit.MICROS),
                        created.plus(retentionMicros, ChronoUnit.MICROS),
                        null),
                false);
    }

    /**
     * The finished record of a row of {@link Sql#claim()}, read by position (status, fingerprint, owner, created,
     * lease end, expiry, response status, headers, body), its times without {@code OffsetDateTime}.
     */
    private static IdempotencyRecord finishedRecord(ResultSet row, ScopeKey key, String statusName)
            throws SQLException {
        RecordStatus status = RecordStatus.valueOf(statusName);
        String owner = row.getString(3);
        StoredResponse response = null;
        if (status.isFinished()) {
            Array array = row.getArray(8);
            try {
                response = StoredResponse.ofHeaderPairs(row.getInt(7), (String[]) array.getArray(), row.getBytes(9));
            } finally {
                array.free();
            }
        }
        return new IdempotencyRecord(
                key,
                status,
                Fingerprint.decode(row.getString(2)),
                owner == null ? null : new OwnerToken(owner),
                Objects.requireNonNull(Timestamps.instant(row, 4), "created_at"),
                Timestamps.instant(row, 5),
                Objects.requireNonNull(Timestamps.instant(row, 6), "expires_at"),
                response);
    }

    /**
     * The record of the current row. {@code key}: the key the row was read by (its primary key), so that a
     * claim or find does not parse and validate the hash it sent again; null to read it from the row.
     */
    private static IdempotencyRecord record(ResultSet row, @Nullable ScopeKey key) throws SQLException {
        RecordStatus status = RecordStatus.valueOf(row.getString("status"));
        String owner = row.getString("owner_token");
        return new IdempotencyRecord(
                key != null ? key : new ScopeKey(row.getString("scope_key")),
                status,
                Fingerprint.decode(row.getString("fingerprint")),
                owner == null ? null : new OwnerToken(owner),
                instant(row, "created_at"),
                nullableInstant(row, "lease_expires_at"),
                instant(row, "expires_at"),
                status.isFinished() ? response(row) : null);
    }

    private static StoredResponse response(ResultSet row) throws SQLException {
        Array array = row.getArray("response_headers");
        try {
            return StoredResponse.ofHeaderPairs(
                    row.getInt("response_status"), (String[]) array.getArray(), row.getBytes("response_body"));
        } finally {
            array.free();
        }
    }

    /**
     * Headers as {@code name1, value1, name1, value2, name2, value3, ...}: order and repeats kept. A U+0000, which
     * no HTTP field may hold and PostgreSQL's text cannot, is stored as U+FFFD: it failed every completion of its
     * record (SQLSTATE 22021), which was then left to be taken over and run again.
     */
    static String[] flatten(Map<String, List<String>> headers) {
        List<String> pairs = new ArrayList<>();
        headers.forEach((name, values) -> values.forEach(value -> {
            pairs.add(storable(name));
            pairs.add(storable(value));
        }));
        return pairs.toArray(String[]::new);
    }

    private static String storable(String text) {
        return text.indexOf('\u0000') < 0 ? text : text.replace('\u0000', '\uFFFD');
    }

    private static Instant instant(ResultSet row, String column) throws SQLException {
        return Objects.requireNonNull(nullableInstant(row, column), column);
    }

    private static @Nullable Instant nullableInstant(ResultSet row, String column) throws SQLException {
        OffsetDateTime value = row.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }

    // ---------------------------------------------------------------------------- connections

    /** One unit of JDBC work. */
    @FunctionalInterface
    private interface SqlWork<T> {
        T run(Connection connection) throws SQLException;
    }

    /** Runs {@code work} on a connection of the store's own, in auto-commit mode (one statement, one commit). */
    private <T> T onOwnConnection(String operation, SqlWork<T> work) {
        try {
            return withOwnConnection(work);
        } catch (SQLException e) {
            throw SqlFailures.unavailable(operation, e);
        }
    }

    /** {@link #onOwnConnection} with its failure as it is (a shared statement's, which {@link Combiner} sorts out). */
    private <T> T withOwnConnection(SqlWork<T> work) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            if (!connection.getAutoCommit()) {
                connection.setAutoCommit(true);
            }
            return work.run(connection);
        }
    }

    /** Runs {@code work} on the caller's connection, leaving its transaction alone. */
    private static <T> T onCallerConnection(String operation, Connection connection, SqlWork<T> work) {
        Objects.requireNonNull(connection, "connection");
        try {
            return work.run(connection);
        } catch (SQLException e) {
            throw SqlFailures.unavailable(operation, e);
        }
    }

    // ------------------------------------------------------------------------------- arguments

    private static long micros(Duration duration) {
        return TimeUnit.MICROSECONDS.convert(duration);
    }

    private static void requireClaimArguments(
            ScopeKey key, Fingerprint fingerprint, Duration lease, Duration retention) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        requirePositive(lease, "lease");
        requirePositive(retention, "retention");
    }

    private static void requireFinish(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        requireOwner(key, owner);
        Objects.requireNonNull(response, "response");
        if (!outcome.isFinished()) {
            throw new IllegalArgumentException("complete takes COMPLETED or FAILED");
        }
    }

    private static void requireOwner(ScopeKey key, OwnerToken owner) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(owner, "owner");
    }

    private static void requirePositive(Duration duration, String name) {
        Objects.requireNonNull(duration, name);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be positive");
        }
    }

    /** Sets the login timeout of a data source that has none, so that an unreachable server fails fast. */
    private static void applyLoginTimeout(DataSource dataSource, Duration loginTimeout) {
        try {
            if (dataSource.getLoginTimeout() == 0) {
                dataSource.setLoginTimeout(Math.toIntExact(loginTimeout.toSeconds()));
            }
        } catch (SQLException | RuntimeException e) {
            // a pool that manages its own connection timeout: leave it alone
        }
    }

    @Override
    public String toString() {
        return "PostgresIdempotencyStore[" + config.tableName() + ", listening=" + listener.isListening() + "]";
    }
}
