package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.ClaimDecision;
import dev.exactly.idempotency.IdempotencyKeyReusedException;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore.PhaseRow;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore.RetryRow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * Idempotency that commits with the caller's own writes: a request's record, its progress and its final
 * answer live in PostgreSQL and change only inside the caller's transactions, so a business write and
 * the record that says it happened commit together or not at all, and a crash between two transactions
 * resumes from the last one instead of repeating it. This is Stripe's "atomic phases" pattern as a
 * library; nothing in it knows what the phases do.
 *
 * <pre>{@code
 * // transaction 1: claim the key and write what the first step creates, with a checkpoint
 * PhaseStart start = phases.begin(c, request);           // Owned | Replay | InFlight | DeadLettered | KeyReused
 * Phase phase = ((PhaseStart.Owned) start).phase();
 * insertShipment(c, ...);
 * phases.checkpoint(c, phase, Checkpoint.of("shipment_created"));
 * // commit; then the slow, remote step (a carrier, a bank), under a lease kept alive meanwhile
 * try (LeaseKeeper alive = phases.keepAlive(phase)) { label = carrier.book(shipmentId); }
 * // transaction 2: the result and the final answer, fenced by the owner token
 * updateShipment(c, label);
 * if (!phases.finish(c, phase, RecordStatus.COMPLETED, answer)) { rollback: another owner took over }
 * }</pre>
 *
 * <h2>What commits with what</h2>
 * <ul>
 *   <li>{@link #begin}: the claim (one {@code INSERT ... ON CONFLICT ... RETURNING}, unique on the
 *       scope) joins the caller's transaction; rolled back, it leaves no trace. What it found is decided
 *       by {@link ClaimDecision}, the same code the engine uses (replay, in flight with its
 *       {@code Retry-After}, key reused).</li>
 *   <li>{@link #checkpoint}: the step's name and a little state, fenced by the owner token. From the
 *       first checkpoint on, the record never expires until the phase is finished.</li>
 *   <li>{@link #finish}: the answer, fenced by the owner token. If another owner took over meanwhile
 *       it returns {@code false}: roll back, and the caller's business writes go with it. Two executions
 *       that both slipped past an expired lease can therefore never both commit.</li>
 *   <li>{@link #retryLater}: a failed attempt; recovery takes the phase over after a backoff (exponential,
 *       capped, full jitter), and gives up (dead letter) after {@link RecoveryPolicy#maxAttempts}.</li>
 * </ul>
 *
 * <h2>Recovery</h2>
 * A phase whose owner died stops renewing its lease. {@link #recovery} builds a worker that takes such
 * phases over in batches ({@code FOR UPDATE SKIP LOCKED}: any number of workers, anywhere), hands each to
 * the application's {@link PhaseResumer} with the last committed checkpoint, and counts its failures. A
 * client retry of the same key takes the phase over just the same once the lease ended. An operator lists
 * dead letters ({@link #deadLetters}) and takes one over by hand ({@link #takeOver}).
 *
 * <p>Thread-safe; the statements run on the caller's connection and never commit, roll back or change
 * its auto-commit mode. Methods that take no connection use the store's own.
 */
public final class AtomicPhases {
    private final PostgresIdempotencyStore store;
    private final InstantSource clock;
    private final RandomGenerator random;
    private final RecoveryPolicy recoveryPolicy;
    private final PhaseListener listener;
    /** The store's statements on its table, for the writes a caller sends with its own ({@link PhaseWrite}). */
    private final Sql sql;
    /** {@link #NEW_PHASE} on the store's table. */
    private final String newPhase;

    /**
     * A new phase of a key that has no record at all, with its first checkpoint: the record as a fresh claim
     * inserts it (V7's claim function), plus the checkpoint, and the endless expiry of a phase in progress,
     * as {@link #checkpoint} would set them, and the claim's expiry as the purge's lower bound ({@code
     * purge_after}, migration V8). No {@code ON CONFLICT}: a key with any record (in flight, finished,
     * expired) makes it fail with a unique violation. Params: key, fingerprint, owner, lease µs, retention
     * µs, checkpoint name, checkpoint state, retention µs.
     */
    private static final String NEW_PHASE = """
            INSERT INTO idempotency_records (
                scope_key, status, fingerprint, owner_token, created_at, lease_expires_at,
                expires_at, retention, takeovers, updated_at, recovery_point, checkpoint_state, purge_after)
            VALUES (
                ?, 'PROCESSING', ?, ?, statement_timestamp(),
                statement_timestamp() + ? * interval '1 microsecond',
                'infinity', ? * interval '1 microsecond', 0, statement_timestamp(), ?, ?,
                statement_timestamp() + ? * interval '1 microsecond')""";

    private AtomicPhases(Builder builder) {
        this.store = builder.store;
        this.sql = Sql.forTable(builder.store.config().tableName());
        this.newPhase = Sql.onTable(NEW_PHASE, builder.store.config().tableName());
        this.clock = builder.clock;
        this.random = builder.random;
        this.recoveryPolicy = builder.recoveryPolicy;
        this.listener = new SafePhaseListener(builder.listener);
    }

    /** A builder over {@code store} (whose table must have the columns of both migrations). */
    public static Builder builder(PostgresIdempotencyStore store) {
        return new Builder(store);
    }

    public PostgresIdempotencyStore store() {
        return store;
    }

    public RecoveryPolicy recoveryPolicy() {
        return recoveryPolicy;
    }

    /**
     * Claims the request's key in the caller's transaction.
     *
     * @throws dev.exactly.idempotency.StoreUnavailableException the statement failed (the caller's
     *         transaction is aborted); this includes a conflicting record committed after the
     *         transaction's snapshot: roll back and begin again
     */
    public PhaseStart begin(Connection connection, IdempotencyRequest request) {
        IdempotencyPolicy policy = request.policy();
        PhaseRow row = store.claimPhase(
                connection,
                request.key(),
                request.fingerprint(),
                OwnerToken.random(),
                policy.lease(),
                policy.retention());
        ClaimDecision decision;
        try {
            decision = ClaimDecision.of(request, row.outcome(), clock.instant(), false);
        } catch (IdempotencyKeyReusedException reused) {
            return new PhaseStart.KeyReused();
        }
        return switch (decision) {
            case ClaimDecision.Run run ->
                new PhaseStart.Owned(new Phase(
                        request.key(),
                        run.owner(),
                        request.fingerprint(),
                        policy,
                        run.takeover(),
                        checkpoint(row),
                        row.attempts()));
            case ClaimDecision.Replay replay ->
                new PhaseStart.Replay(replay.response(), replay.record().expiresAt());
            case ClaimDecision.InFlight inFlight ->
                row.deadLetteredAt() != null
                        ? new PhaseStart.DeadLettered(record(row))
                        : new PhaseStart.InFlight(inFlight.retryAfter());
        };
    }

    /**
     * Commits {@code next} with the caller's writes: a new owner resumes from it.
     *
     * @return false when the caller no longer owns the phase: roll back
     */
    public boolean checkpoint(Connection connection, Phase phase, Checkpoint next) {
        Objects.requireNonNull(next, "next");
        return store.checkpoint(connection, phase.key(), phase.owner(), next.name(), next.state());
    }

    /**
     * Finishes the phase with its answer, kept and replayed for the retention of the request that began it.
     *
     * @param status {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED} (both replayed)
     * @return false when the caller no longer owns the phase: roll back
     */
    public boolean finish(Connection connection, Phase phase, RecordStatus status, StoredResponse response) {
        return store.complete(connection, phase.key(), phase.owner(), status, response);
    }

    /**
     * The claim of a key that has no record yet, with its first checkpoint, as a statement the caller sends
     * with its own writes and the commit in one round trip (see {@link PhaseWrite}): what {@link #begin}
     * then {@link #checkpoint} commit for a fresh key, in one write. A key with any record (in flight,
     * finished, expired and not yet purged) makes the statement fail with a unique violation (SQLState
     * 23505), which aborts the caller's transaction: roll back and {@link #begin} as usual, which decides
     * what that record means.
     *
     * @return the claim; its {@link PhaseClaim#phase()} is the caller's once the statement succeeded
     */
    public PhaseClaim beginningNew(IdempotencyRequest request, Checkpoint first) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(first, "first");
        IdempotencyPolicy policy = request.policy();
        OwnerToken owner = OwnerToken.random();
        Phase phase = new Phase(request.key(), owner, request.fingerprint(), policy, false, null, 0);
        return new PhaseClaim() {
            @Override
            public Phase phase() {
                return phase;
            }

            @Override
            public String sql() {
                return newPhase;
            }

            @Override
            public int bind(PreparedStatement s, int first0) throws SQLException {
                s.setString(first0, request.key().hash());
                s.setString(first0 + 1, request.fingerprint().encoded());
                s.setString(first0 + 2, owner.value());
                s.setLong(first0 + 3, TimeUnit.MICROSECONDS.convert(policy.lease()));
                s.setLong(first0 + 4, TimeUnit.MICROSECONDS.convert(policy.retention()));
                s.setString(first0 + 5, first.name());
                s.setBytes(first0 + 6, first.state());
                s.setLong(first0 + 7, TimeUnit.MICROSECONDS.convert(policy.retention()));
                return first0 + 8;
            }

            @Override
            public boolean applied(Statement s) throws SQLException {
                return s.getUpdateCount() == 1;
            }
        };
    }

    /**
     * {@link #checkpoint} as a statement the caller sends with its own in one round trip (see
     * {@link PhaseWrite}): its result is the update count, 1 when it applied.
     */
    public PhaseWrite checkpointing(Phase phase, Checkpoint next) {
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(next, "next");
        return new PhaseWrite() {
            @Override
            public String sql() {
                return sql.checkpoint();
            }

            @Override
            public int bind(PreparedStatement s, int first) throws SQLException {
                s.setString(first, next.name());
                s.setBytes(first + 1, next.state());
                s.setString(first + 2, phase.key().hash());
                s.setString(first + 3, phase.owner().value());
                return first + 4;
            }

            @Override
            public boolean applied(Statement s) throws SQLException {
                return s.getUpdateCount() == 1;
            }
        };
    }

    /**
     * {@link #finish} as a statement the caller sends with its own in one round trip (see
     * {@link PhaseWrite}): the record's final state and answer, fenced by the owner token; its result is the
     * record it finished (none when the caller no longer owns the phase). Waiting processes are notified
     * when the caller commits, as with {@link #finish}.
     *
     * @param status {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED} (both replayed)
     */
    public PhaseWrite finishing(Phase phase, RecordStatus status, StoredResponse response) {
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(response, "response");
        if (!status.isFinished()) {
            throw new IllegalArgumentException("a phase finishes COMPLETED or FAILED");
        }
        String channel = store.config().notificationChannel();
        return new PhaseWrite() {
            @Override
            public String sql() {
                return sql.complete();
            }

            @Override
            public int bind(PreparedStatement s, int first) throws SQLException {
                s.setString(first, status.name());
                s.setInt(first + 1, response.status());
                // a String[] as the store binds it (sent in binary), not a java.sql.Array's escaped text
                s.setObject(first + 2, PostgresIdempotencyStore.flatten(response.headers()));
                s.setBytes(first + 3, response.body());
                s.setString(first + 4, phase.key().hash());
                s.setString(first + 5, phase.owner().value());
                s.setString(first + 6, channel);
                return first + 7;
            }

            @Override
            public boolean applied(Statement s) throws SQLException {
                try (ResultSet rows = s.getResultSet()) {
                    return rows != null && rows.next();
                }
            }
        };
    }

    /**
     * Gives the key up: nothing the phase stands for happened (a refusal before any side effect), so a
     * retry begins afresh.
     *
     * @return false when the caller no longer owns the phase
     */
    public boolean release(Connection connection, Phase phase) {
        return store.release(connection, phase.key(), phase.owner());
    }

    /**
     * Counts a failed attempt (the error is kept for operators), and hands the phase to recovery after
     * the backoff, or dead-letters it after the last attempt. The caller no longer owns the phase
     * afterwards: its later writes and renewals are refused, and the next owner (recovery, a retry after
     * the backoff, an operator) gets a token of its own.
     */
    public Retry retryLater(Connection connection, Phase phase, String error) {
        String kept = error.length() > 1000 ? error.substring(0, 1000) : error;
        Optional<RetryRow> row = store.retryLater(
                connection,
                phase.key(),
                phase.owner(),
                kept,
                recoveryPolicy.delayAfter(phase.attempts() + 1, random),
                recoveryPolicy.maxAttempts());
        if (row.isEmpty()) {
            return new Retry.Lost();
        }
        RetryRow r = row.get();
        if (r.deadLetteredAt() != null) {
            listener.onDeadLettered(phase.key(), r.attempts(), kept);
            return new Retry.DeadLettered(r.attempts());
        }
        listener.onRetryScheduled(phase.key(), r.attempts(), r.leaseExpiresAt(), kept);
        return new Retry.Scheduled(r.attempts(), r.leaseExpiresAt());
    }

    /**
     * Keeps the phase's lease alive while a long step runs (a remote call between two transactions), per
     * its policy's keep-alive; close it when the step is done.
     */
    public LeaseKeeper keepAlive(Phase phase) {
        return LeaseKeeper.start(
                store,
                phase.key(),
                phase.owner(),
                phase.policy().lease(),
                phase.policy().keepAlive(),
                result -> {});
    }

    /** The phase record of a key, read on the caller's connection (its own writes included). */
    public Optional<PhaseRecord> find(Connection connection, ScopeKey key) {
        return store.findPhase(connection, key).map(AtomicPhases::record);
    }

    /** The phase record of a key. */
    public Optional<PhaseRecord> find(ScopeKey key) {
        return store.withOwnConnection("find", c -> find(c, key));
    }

    /** Unfinished phases recovery works on (not dead-lettered), least recently changed first. */
    public List<PhaseRecord> inProgress(int limit) {
        return list(false, limit);
    }

    /** Phases recovery gave up on, least recently changed first. */
    public List<PhaseRecord> deadLetters(int limit) {
        return list(true, limit);
    }

    private List<PhaseRecord> list(boolean deadLettered, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive");
        }
        return store.withOwnConnection(
                "list phases",
                c -> store.phases(c, deadLettered, limit).stream()
                        .map(AtomicPhases::record)
                        .toList());
    }

    /**
     * An operator takes a dead-lettered phase (or one whose owner's lease ran out) over by hand, in the
     * caller's transaction; its attempts start over. Empty when a live owner holds it, or it is finished
     * or gone.
     *
     * @param policy lease and keep-alive of the operator's ownership
     */
    public Optional<Phase> takeOver(Connection connection, ScopeKey key, IdempotencyPolicy policy) {
        return store.takeOverOne(connection, key, OwnerToken.random(), policy.lease())
                .map(row -> {
                    listener.onOperatorTakeover(record(row));
                    return phase(row, policy);
                });
    }

    /** A recovery worker that resumes abandoned phases with {@code resumer} (start it, or call runOnce). */
    public PhaseRecovery recovery(PhaseResumer resumer, IdempotencyPolicy policy) {
        return new PhaseRecovery(this, resumer, policy);
    }

    /** Takes over up to {@code batch} abandoned phases on the store's own connection. */
    List<Phase> takeOverExpired(int batch, IdempotencyPolicy policy) {
        return store
                .withOwnConnection("recovery takeover", c -> store.takeOverExpired(c, policy.lease(), batch))
                .stream()
                .map(row -> {
                    listener.onRecoveryTakeover(record(row));
                    return phase(row, policy);
                })
                .toList();
    }

    private static Phase phase(PhaseRow row, IdempotencyPolicy policy) {
        var record = row.outcome().record();
        return new Phase(
                record.key(),
                Objects.requireNonNull(record.owner(), "a taken-over record has an owner"),
                record.fingerprint(),
                policy,
                true,
                checkpoint(row),
                row.attempts());
    }

    private static @Nullable Checkpoint checkpoint(PhaseRow row) {
        return row.checkpoint() == null ? null : new Checkpoint(row.checkpoint(), row.state());
    }

    private static PhaseRecord record(PhaseRow row) {
        return new PhaseRecord(
                row.outcome().record(), checkpoint(row), row.attempts(), row.lastError(), row.deadLetteredAt());
    }

    /** Validating builder; only the store is required. */
    public static final class Builder {
        private final PostgresIdempotencyStore store;
        private InstantSource clock = InstantSource.system();
        private RandomGenerator random = RandomGenerator.getDefault();
        private RecoveryPolicy recoveryPolicy = RecoveryPolicy.ofDefaults();
        private PhaseListener listener = PhaseListener.NOOP;

        private Builder(PostgresIdempotencyStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /** The clock of {@code Retry-After} estimates (leases are the database's time). */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The jitter of recovery's backoff (used from any thread). */
        public Builder random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        public Builder recoveryPolicy(RecoveryPolicy recoveryPolicy) {
            this.recoveryPolicy = Objects.requireNonNull(recoveryPolicy, "recoveryPolicy");
            return this;
        }

        public Builder listener(PhaseListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        public AtomicPhases build() {
            return new AtomicPhases(this);
        }
    }
}
