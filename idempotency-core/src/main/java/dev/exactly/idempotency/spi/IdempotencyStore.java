package dev.exactly.idempotency.spi;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.time.Duration;
import java.util.Optional;

/**
 * Where idempotency records live. Each method is <strong>one atomic operation</strong> in the store
 * (a Lua script, one SQL statement, one {@code ConcurrentHashMap.compute}); never read-then-write.
 * Time is the store's own (the Redis server's clock, the database's clock, an injected
 * {@link java.time.InstantSource} in memory), so that several processes agree on when a lease ends.
 *
 * <p>Failures to reach the store are reported as
 * {@link dev.exactly.idempotency.StoreUnavailableException}; the engine then fails closed.
 *
 * <p>Contract (checked by the suite in {@code idempotency-store-tck}):
 * <ul>
 *   <li>{@link #claim}: absent (or expired) key → new {@code PROCESSING} record owned by the token the
 *       caller presents, {@link ClaimOutcome.Claimed}; processing with a live lease → {@link ClaimOutcome.InFlight};
 *       processing with an expired lease <em>and the same fingerprint</em> → taken over by the presented
 *       token ({@code Claimed} with {@code takeover}); finished → {@link ClaimOutcome.Finished}. A
 *       record with a different fingerprint is never modified.</li>
 *   <li>{@link #complete}, {@link #release}, {@link #renew} apply only if the record is processing
 *       and owned by {@code owner}, and return whether they did. A stale owner gets {@code false}.</li>
 *   <li>Every transition that ends processing (complete, release) signals subscribers of the key.</li>
 * </ul>
 */
public interface IdempotencyStore extends AutoCloseable {

    /**
     * Claims the key for a new owner if nobody holds it.
     *
     * <p>The caller chooses the new owner's token, so that a claim whose answer was lost (a timeout
     * after the store applied it) can still be undone: {@code release(key, owner)} removes the record if,
     * and only if, that claim took it. A store never makes up a token of its own.
     *
     * @param owner     the token of the new owner, should this claim take the key; fresh per claim
     * @param lease     how long the new owner may work before another request may take over
     * @param retention how long the record (processing or finished) is kept
     */
    ClaimOutcome claim(ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention);

    /** {@link #claim(ScopeKey, Fingerprint, OwnerToken, Duration, Duration)} with a fresh random token. */
    default ClaimOutcome claim(ScopeKey key, Fingerprint fingerprint, Duration lease, Duration retention) {
        return claim(key, fingerprint, OwnerToken.random(), lease, retention);
    }

    /**
     * Finishes the owner's record with a response kept for the retention given at claim time.
     *
     * @param outcome {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED}
     * @return false when {@code owner} no longer owns a processing record
     */
    boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response);

    /** Deletes the owner's processing record, so that a retry runs again. */
    boolean release(ScopeKey key, OwnerToken owner);

    /** Extends the owner's lease to {@code lease} from now. */
    boolean renew(ScopeKey key, OwnerToken owner, Duration lease);

    /** The record, if one exists and has not expired. */
    Optional<IdempotencyRecord> find(ScopeKey key);

    /**
     * Registers interest in the key: the returned subscription is signalled when the record leaves
     * {@code PROCESSING}. Subscribe <em>before</em> claiming again, so no change is missed: the change a
     * subscription must signal is one to the record that claim found in flight (a store may do its part of
     * the wait in that claim, as the Redis store marks the record waited for), and the engine claims again
     * after every wake before it waits on.
     */
    ChangeSubscription subscribe(ScopeKey key);

    /** Releases connections and threads the store owns. */
    @Override
    default void close() {}
}
