package dev.exactly.payments.keys;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.Checkpoint;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseStart;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.Retry;
import dev.exactly.payments.db.Jdbc;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable idempotency tier: PostgreSQL records ({@link PostgresIdempotencyStore}) begun, checkpointed
 * and finished on the caller's connection, so that a record's final state commits in the same transaction
 * as the business writes. Its methods are those of the store's atomic phases
 * ({@code dev.exactly.idempotency.postgres.AtomicPhases}), with their types:
 *
 * <ol>
 *   <li>{@link #begin} claims the request in the caller's transaction: owned (a {@link Phase}), a replay
 *       of the recorded answer, in flight, or the key reused with another payload;</li>
 *   <li>{@link #checkpoint} commits how far the owner got, with the owner's writes;</li>
 *   <li>{@link #finish} records the final answer, fenced by the owner token;</li>
 *   <li>{@link #retryLater} hands a request that got no answer over to recovery after a backoff, or
 *       dead-letters it after the last attempt;</li>
 *   <li>{@link #keepAlive} renews the lease while the owner works outside a transaction.</li>
 * </ol>
 * Every write is fenced: {@code false} (or {@link Retry.Lost}) means another owner took the request
 * over, and the caller must roll back.
 *
 * <p>Unlike atomic phases, this tier keeps the service's own bookkeeping: the attempts of a request are
 * counted on its charge row ({@code payments_charge.attempts}: {@link #retryLater} reads them, the caller
 * writes them), a dead letter is the charge row's status, and records expire after their retention (the
 * charge row keeps the answer for good).
 */
public final class DurableTier implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DurableTier.class);
    private static final Duration DEAD_LETTER_HANDOVER = Duration.ofMillis(1);
    private static final Duration MIN_RETRY_AFTER = Duration.ofSeconds(1);
    private static final String ATTEMPTS = "SELECT attempts FROM payments_charge WHERE scope_key = ?";

    private final PostgresIdempotencyStore store;
    private final IdempotencyPolicy policy;
    private final RetryPolicy retries;
    private final InstantSource clock;

    /**
     * @param policy  lease, retention and keep-alive of takeovers
     * @param retries attempts and backoff of requests that got no answer
     */
    public DurableTier(PostgresIdempotencyStore store, IdempotencyPolicy policy, RetryPolicy retries,
            InstantSource clock) {
        this.store = store;
        this.policy = policy;
        this.retries = retries;
        this.clock = clock;
    }

    /** Stops the store's listener connection. */
    @Override
    public void close() {
        store.close();
    }

    /**
     * Claims {@code request} in the caller's transaction (the claim holds the record's row lock until that
     * transaction ends). Any answer but {@link PhaseStart.Owned} wrote nothing the caller needs: it may roll
     * back.
     */
    public PhaseStart begin(Connection c, IdempotencyRequest request) {
        IdempotencyPolicy p = request.policy();
        return start(c, request.key(), request.fingerprint(), p,
                store.claim(c, request.key(), request.fingerprint(), p.lease(), p.retention()));
    }

    /**
     * Takes over the request of a scope whose owner went away (the recovery worker, an operator), in the
     * caller's transaction: owned if no live owner holds it, with the last checkpoint of the earlier owner.
     *
     * @param fingerprint the fingerprint of the request (kept on the business row: the record may have
     *                    expired)
     * @return empty when a live owner holds it, or it is finished
     */
    public Optional<Phase> takeOver(Connection c, ScopeKey key, Fingerprint fingerprint) {
        PhaseStart start = start(c, key, fingerprint, policy,
                store.claim(c, key, fingerprint, policy.lease(), policy.retention()));
        return start instanceof PhaseStart.Owned owned ? Optional.of(owned.phase()) : Optional.empty();
    }

    private PhaseStart start(Connection c, ScopeKey key, Fingerprint fingerprint, IdempotencyPolicy p,
            ClaimOutcome outcome) {
        if (outcome instanceof ClaimOutcome.Claimed claimed) {
            // a takeover keeps the earlier owner's checkpoint and attempts; a fresh claim starts without
            Checkpoint last = null;
            int attempts = 0;
            if (claimed.takeover()) {
                last = store.findRecoveryPoint(c, key).map(Checkpoint::of).orElse(null);
                attempts = attemptsSoFar(c, key);
            }
            return new PhaseStart.Owned(new Phase(key, claimed.owner(), fingerprint, p, claimed.takeover(), last,
                    attempts));
        }
        IdempotencyRecord record = outcome.record();
        if (!record.fingerprint().equals(fingerprint)) {
            return new PhaseStart.KeyReused();
        }
        if (outcome instanceof ClaimOutcome.Finished) {
            StoredResponse stored = record.response();
            if (stored == null) {
                throw new IllegalStateException("a finished record carries its response");
            }
            return new PhaseStart.Replay(stored, record.expiresAt());
        }
        Instant leaseEnd = record.leaseExpiresAt();
        Duration left = leaseEnd == null ? Duration.ZERO : Duration.between(clock.instant(), leaseEnd);
        return new PhaseStart.InFlight(left.compareTo(MIN_RETRY_AFTER) < 0 ? MIN_RETRY_AFTER : left);
    }

    /**
     * Records how far the owner got, in the caller's transaction (it also takes the record's row lock,
     * which every finisher takes first).
     *
     * @return false when the owner lost the request: roll back
     */
    public boolean checkpoint(Connection c, Phase phase, Checkpoint next) {
        return store.updateRecoveryPoint(c, phase.key(), phase.owner(), next.name());
    }

    /**
     * Finishes the owner's request with its answer in the caller's transaction.
     *
     * @param status {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED} (a replayed refusal)
     * @return false when the owner lost the request: roll back
     */
    public boolean finish(Connection c, Phase phase, RecordStatus status, StoredResponse response) {
        return store.complete(c, phase.key(), phase.owner(), status, response);
    }

    /**
     * Counts a failed attempt of the owner's request and hands the request over: its lease now ends after
     * the backoff of that attempt, and recovery (or a retry) takes it then; after the last attempt it is
     * dead-lettered. In the caller's transaction, which must then record the attempt on the business row.
     *
     * @param error what went wrong (the caller records it)
     */
    public Retry retryLater(Connection c, Phase phase, String error) {
        int attempt = attemptsSoFar(c, phase.key()) + 1;
        boolean last = attempt >= retries.maxAttempts();
        Duration delay = last ? DEAD_LETTER_HANDOVER : retries.delayAfter(attempt);
        if (!store.renew(c, phase.key(), phase.owner(), delay)) {
            return new Retry.Lost();
        }
        log.debug("durable record {}: attempt {} failed ({}); {}", phase.key(), attempt, error,
                last ? "dead-lettered" : "next in " + delay);
        return last ? new Retry.DeadLettered(attempt) : new Retry.Scheduled(attempt, clock.instant().plus(delay));
    }

    private static int attemptsSoFar(Connection c, ScopeKey key) {
        return Jdbc.queryOne(c, ATTEMPTS, s -> s.setString(1, key.hash()), rs -> rs.getInt(1)).orElse(0);
    }

    /**
     * Keeps the owner's lease alive until closed: renewed every third of the lease in a short statement of
     * its own (owner-fenced), for at most the keep-alive's max hold. An owner holds one around its long
     * steps (the processor call, phase 3), so that a slow processor never lets recovery take the request
     * over and call the processor a second time, while a dead or frozen owner still loses the request one
     * lease after its last renewal.
     */
    public LeaseKeeper keepAlive(Phase phase) {
        ScopeKey key = phase.key();
        IdempotencyPolicy p = phase.policy();
        return LeaseKeeper.start(store, key, phase.owner(), p.lease(), p.keepAlive(), result -> {
            switch (result) {
                case RENEWED -> { }
                case LOST -> log.warn("durable record {}: a renewal was refused (the record was just finished, or "
                        + "another owner took it over; then this owner's writes are refused)", key);
                case FAILED -> log.warn("durable record {}: the lease could not be renewed (database unreachable); "
                        + "retrying", key);
                case MAX_HOLD -> log.warn("durable record {}: held for {} by one owner; no longer renewed", key,
                        p.keepAlive().maxHold());
            }
        });
    }

    /** The record of a scope, if it has not expired, with its last checkpoint. */
    public Optional<RecordWithCheckpoint> find(Connection c, ScopeKey key) {
        return store.find(c, key).map(r -> new RecordWithCheckpoint(r,
                store.findRecoveryPoint(c, key).map(Checkpoint::of).orElse(null)));
    }

    /** A record and its last checkpoint. */
    public record RecordWithCheckpoint(IdempotencyRecord record, @Nullable Checkpoint checkpoint) {}

    /**
     * Deletes expired records in batches of {@code batchSize}.
     *
     * @return how many were deleted
     */
    public long purgeExpired(int batchSize) {
        return store.purgeAllExpired(batchSize);
    }
}
