package dev.exactly.idempotency;

import dev.exactly.idempotency.IdempotencyListener.WaitResult;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Guards actions so that each scope runs at most once, and every retry gets the recorded outcome.
 *
 * <pre>{@code
 * var engine = IdempotencyEngine.builder(store).build();
 * var request = IdempotencyRequest.of(scope, fingerprint, IdempotencyPolicy.ofDefaults());
 * IdempotentResult result = engine.execute(request, lease -> Outcome.complete(charge()));
 * }</pre>
 *
 * <p>The algorithm: claim atomically first (never read, then lock); a finished record is replayed if
 * its fingerprint matches; a processing record is a conflict, or, under a wait policy, a bounded wait
 * woken by the store's push with a re-claim after each wake-up (so a released or abandoned key is taken
 * over by exactly one waiter). The fingerprint is compared on every path that returns an existing
 * record. Store failures before the action fail closed with {@link StoreUnavailableException}: the
 * action never runs unguarded.
 *
 * <p>A store that does not answer a write may still have applied it. The engine therefore chooses each
 * claim's owner token itself, and when a claim goes unanswered it releases the key by that token in the
 * background as soon as the store answers again, so that a stall blocks the key for about the stall, not
 * for the whole lease. When the action ran but its outcome could not be recorded, the caller still gets
 * the action's own response ({@link IdempotentResult.Kind#UNRECORDED}) and the recording is retried in
 * the background with the owner token: a failure after the action never reads as "not executed".
 *
 * <p>While the action runs, its lease is kept alive per the policy's {@link KeepAlive} (on by default):
 * renewed every third of the lease, fenced by the owner token, until the action returns or throws, and
 * never past the max hold. A slow action therefore keeps its key (duplicates get a conflict or wait),
 * while a dead or frozen owner's lease runs out within one lease of its last renewal. A renewal the
 * store refuses is reported ({@link IdempotencyListener#onRenewal}) and shows in {@link Lease#isLost()};
 * the action's final write is fenced as always, so a lost owner gets {@link LeaseLostException}, never a
 * recorded success. Each keep-alive waits for its first renewal as an entry in one shared list, swept by
 * one daemon thread when an entry is due (it ends when idle), and renews on a virtual thread of its own, started only if the action is still running
 * then and ending with it, so the engine holds no threads of its own between requests and needs no
 * closing.
 * The engine is thread-safe and holds no per-request state between calls.
 */
public final class IdempotencyEngine {
    private final IdempotencyStore store;
    private final InstantSource clock;
    private final IdempotencyListener listener;
    /** Whether anybody listens: without a listener, hold times are not measured. */
    private final boolean listening;

    private final @Nullable Duration pollInterval;
    private final StoreRepairs repairs;
    private final ExecutionInterceptor interceptor;

    @SuppressWarnings("ReferenceEquality") // identity: the NOOP instance, not an equal one
    private IdempotencyEngine(Builder builder) {
        this.store = builder.store;
        this.clock = builder.clock;
        this.listener = builder.listener;
        this.listening = builder.listener != IdempotencyListener.NOOP;
        this.pollInterval = builder.pollInterval;
        this.repairs = new StoreRepairs(builder.listener);
        this.interceptor = builder.interceptor;
    }

    public static Builder builder(IdempotencyStore store) {
        return new Builder(store);
    }

    public IdempotencyStore store() {
        return store;
    }

    /**
     * Runs {@code action} once for the request's scope, or replays the recorded outcome.
     *
     * @throws IdempotencyKeyReusedException the key is bound to a different fingerprint
     * @throws RequestInFlightException      another request holds the key (after the wait, if any)
     * @throws StoreUnavailableException     the store failed before the action ran; it did not run
     * @throws LeaseLostException            the action ran but lost its lease before recording
     * @throws Exception                     whatever the action threw (the key was released)
     */
    public IdempotentResult execute(IdempotencyRequest request, GuardedAction action) throws Exception {
        Objects.requireNonNull(action, "action");
        return interceptor.intercept(request, () -> guarded(request, action));
    }

    private IdempotentResult guarded(IdempotencyRequest request, GuardedAction action) throws Exception {
        long sent = System.nanoTime();
        return switch (decide(request, claim(request), false)) {
            case ClaimDecision.Run run -> run(request, run.claimed(), sent, action);
            case ClaimDecision.Replay replay -> replay(request, replay.record());
            case ClaimDecision.InFlight inFlight ->
                switch (request.policy().inFlight()) {
                    case InFlightPolicy.Reject reject -> {
                        listener.onConflict(request, false);
                        throw new RequestInFlightException(inFlight.retryAfter(), false);
                    }
                    case InFlightPolicy.Wait wait -> waitThenReplay(request, wait.maxWait(), action);
                };
        };
    }

    /** The record of a scope, if any: for status pages and operators. */
    public Optional<IdempotencyRecord> find(ScopeKey key) {
        return guard(null, () -> store.find(key));
    }

    private IdempotentResult waitThenReplay(IdempotencyRequest request, Duration maxWait, GuardedAction action)
            throws Exception {
        Instant start = clock.instant();
        Instant deadline = start.plus(maxWait);
        try (ChangeSubscription subscription = guard(request, () -> store.subscribe(request.key()))) {
            // Re-claim after subscribing: a change between our first claim and the subscription is not lost.
            long sent = System.nanoTime();
            ClaimOutcome outcome = claim(request);
            int overdue = 0; // wakes in a row at a lease end the store did not agree was over
            while (true) {
                switch (decide(request, outcome, true)) {
                    case ClaimDecision.Run run -> {
                        listener.onWait(request, Duration.between(start, clock.instant()), WaitResult.CLAIMED);
                        return run(request, run.claimed(), sent, action);
                    }
                    case ClaimDecision.Replay replay -> {
                        listener.onWait(request, Duration.between(start, clock.instant()), WaitResult.REPLAYED);
                        return replay(request, replay.record());
                    }
                    case ClaimDecision.InFlight inFlight -> {
                        if (!clock.instant().isBefore(deadline)) {
                            listener.onWait(request, Duration.between(start, clock.instant()), WaitResult.TIMED_OUT);
                            listener.onConflict(request, true);
                            throw new RequestInFlightException(inFlight.retryAfter(), true);
                        }
                    }
                }
                Instant now = clock.instant();
                Instant leaseEnd = outcome.record().leaseExpiresAt();
                overdue = leaseEnd != null && !leaseEnd.isAfter(now) ? overdue + 1 : 0;
                subscription.await(nextWake(outcome.record(), now, deadline, overdue));
                sent = System.nanoTime();
                outcome = claim(request);
            }
        }
    }

    /**
     * Until the deadline, but no later than the other owner's lease end (to take over) or the poll tick. A
     * lease end already past by this clock, with the store still counting the lease live (its clock behind
     * ours, or a record that is never taken over), is waited for with a back-off from 10 ms, doubling with
     * each such wake up to 1 s: it was 1 ms every time, a spin of over a thousand claims a second.
     *
     * @param overdue how many wakes in a row found the lease end past by this clock and the record in flight
     */
    private Duration nextWake(IdempotencyRecord record, Instant now, Instant deadline, int overdue) {
        Duration wait = Duration.between(now, deadline);
        Instant leaseEnd = record.leaseExpiresAt();
        if (leaseEnd != null) {
            Duration untilLeaseEnd = overdue > 0
                    ? Duration.ofMillis(Math.min(1000L, 10L << Math.min(overdue - 1, 7)))
                    : Duration.between(now, leaseEnd).plusMillis(1);
            if (untilLeaseEnd.compareTo(wait) < 0) {
                wait = untilLeaseEnd.isNegative() ? Duration.ofMillis(1) : untilLeaseEnd;
            }
        }
        if (pollInterval != null && pollInterval.compareTo(wait) < 0) {
            wait = pollInterval;
        }
        return wait;
    }

    /**
     * Runs the action under a lease kept alive (per the policy) until it returns or throws; then records
     * or releases, fenced by the owner token.
     *
     * @param sent when the claim was sent ({@link System#nanoTime()}): the lease began no earlier
     */
    private IdempotentResult run(
            IdempotencyRequest request, ClaimOutcome.Claimed claimed, long sent, GuardedAction action)
            throws Exception {
        listener.onClaim(request, claimed.takeover());
        Instant claimedAt = clock.instant();
        OwnerToken owner = claimed.owner();
        IdempotencyPolicy policy = request.policy();
        Outcome outcome;
        try (LeaseKeeper keeper = LeaseKeeper.startedAt(
                store,
                request.key(),
                owner,
                policy.lease(),
                policy.keepAlive(),
                result -> listener.onRenewal(request, result),
                sent)) {
            StoreLease lease = new StoreLease(request, owner, claimed.takeover(), keeper);
            outcome = Objects.requireNonNull(action.run(lease), "a guarded action returns an Outcome");
        } catch (Exception | Error failure) {
            try {
                release(request, owner, claimedAt);
            } catch (RuntimeException releaseFailure) {
                failure.addSuppressed(releaseFailure);
            }
            throw failure;
        }
        return switch (outcome) {
            case Outcome.Release release -> {
                release(request, owner, claimedAt);
                yield new IdempotentResult(release.response(), IdempotentResult.Kind.RELEASED, null);
            }
            case Outcome.Complete complete ->
                record(request, owner, claimedAt, RecordStatus.COMPLETED, complete.response());
            case Outcome.Fail fail -> record(request, owner, claimedAt, RecordStatus.FAILED, fail.response());
        };
    }

    /** Releases the owner's key; if the store does not answer, the release is repaired in the background. */
    private void release(IdempotencyRequest request, OwnerToken owner, Instant claimedAt) {
        boolean released;
        try {
            released = store.release(request.key(), owner);
        } catch (RuntimeException e) {
            listener.onStoreError(request, e);
            repairs.submit(request, IdempotencyListener.Repair.RELEASE, () -> store.release(request.key(), owner));
            return;
        }
        if (released) {
            listener.onReleased(request, held(claimedAt));
        } else {
            listener.onLeaseLost(request, held(claimedAt));
        }
    }

    /**
     * Records the outcome. If the store does not answer, the action's response still goes to the caller
     * (the action ran: saying otherwise would invite a second attempt under a new key) and the recording
     * is repaired in the background with the owner token.
     */
    private IdempotentResult record(
            IdempotencyRequest request,
            OwnerToken owner,
            Instant claimedAt,
            RecordStatus status,
            StoredResponse response) {
        boolean recorded;
        try {
            recorded = store.complete(request.key(), owner, status, response);
        } catch (RuntimeException e) {
            listener.onStoreError(request, e);
            repairs.submit(
                    request,
                    IdempotencyListener.Repair.RECORD,
                    () -> store.complete(request.key(), owner, status, response));
            return new IdempotentResult(response, IdempotentResult.Kind.UNRECORDED, null);
        }
        if (!recorded) {
            listener.onLeaseLost(request, held(claimedAt));
            throw new LeaseLostException(owner);
        }
        listener.onRecorded(request, status, held(claimedAt));
        Instant expiresAt = clock.instant().plus(request.policy().retention());
        return new IdempotentResult(response, IdempotentResult.Kind.EXECUTED, expiresAt);
    }

    private IdempotentResult replay(IdempotencyRequest request, IdempotencyRecord record) {
        StoredResponse response = Objects.requireNonNull(record.response(), "a finished record has a response");
        listener.onReplay(request, record);
        return new IdempotentResult(response, IdempotentResult.Kind.REPLAYED, record.expiresAt());
    }

    /** The shared decision, with the mismatch reported to the listener. */
    private ClaimDecision decide(IdempotencyRequest request, ClaimOutcome outcome, boolean waited) {
        try {
            return ClaimDecision.of(request, outcome, clock.instant(), waited);
        } catch (IdempotencyKeyReusedException mismatch) {
            listener.onMismatch(request, outcome.record());
            throw mismatch;
        }
    }

    /**
     * One atomic claim under a fresh owner token. If the store does not answer, it may still have taken
     * the key for that token: the key is released by it in the background once the store answers again.
     */
    private ClaimOutcome claim(IdempotencyRequest request) {
        IdempotencyPolicy policy = request.policy();
        OwnerToken candidate = OwnerToken.random();
        try {
            return guard(
                    request,
                    () -> store.claim(
                            request.key(), request.fingerprint(), candidate, policy.lease(), policy.retention()));
        } catch (StoreUnavailableException e) {
            if (e.mayHaveApplied()) {
                repairs.submit(
                        request, IdempotencyListener.Repair.UNDO_CLAIM, () -> store.release(request.key(), candidate));
            }
            throw e;
        }
    }

    private Duration held(Instant claimedAt) {
        return listening ? Duration.between(claimedAt, clock.instant()) : Duration.ZERO;
    }

    private <T> T guard(@Nullable IdempotencyRequest request, Supplier<T> call) {
        try {
            return Objects.requireNonNull(call.get(), "a store returns a value");
        } catch (StoreUnavailableException e) {
            if (request != null) {
                listener.onStoreError(request, e);
            }
            throw e;
        } catch (RuntimeException e) {
            if (request != null) {
                listener.onStoreError(request, e);
            }
            throw new StoreUnavailableException("idempotency store failed: " + e, e);
        }
    }

    /** The action's view of its lease; renewals and the lost flag go through its keeper. */
    private final class StoreLease implements Lease {
        private final IdempotencyRequest request;
        private final OwnerToken owner;
        private final boolean takeover;
        private final LeaseKeeper keeper;

        StoreLease(IdempotencyRequest request, OwnerToken owner, boolean takeover, LeaseKeeper keeper) {
            this.request = request;
            this.owner = owner;
            this.takeover = takeover;
            this.keeper = keeper;
        }

        @Override
        public ScopeKey key() {
            return request.key();
        }

        @Override
        public OwnerToken owner() {
            return owner;
        }

        @Override
        public boolean takeover() {
            return takeover;
        }

        @Override
        public boolean renew(Duration extension) {
            Objects.requireNonNull(extension, "extension");
            if (extension.toMillis() < 1) {
                throw new IllegalArgumentException("a lease is renewed by at least 1 ms");
            }
            return guard(request, () -> keeper.renew(extension));
        }

        @Override
        public boolean isLost() {
            return keeper.isLost();
        }
    }

    /** Builder; only the store is required. */
    public static final class Builder {
        private final IdempotencyStore store;
        private InstantSource clock = InstantSource.system();
        private IdempotencyListener listener = IdempotencyListener.NOOP;
        private @Nullable Duration pollInterval = Duration.ofSeconds(1);
        private ExecutionInterceptor interceptor = ExecutionInterceptor.NONE;

        private Builder(IdempotencyStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /** The clock for waits and hold times (stores keep their own time for leases). */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        public Builder listener(IdempotencyListener listener) {
            this.listener = new SafeListener(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * How often a waiting request re-reads the store in case a push was lost (1 s by default);
         * {@code null} disables polling, leaving the push and the lease end as the only wake-ups.
         */
        public Builder pollInterval(@Nullable Duration pollInterval) {
            if (pollInterval != null && (pollInterval.isNegative() || pollInterval.isZero())) {
                throw new IllegalArgumentException("pollInterval must be positive, or null to disable polling");
            }
            this.pollInterval = pollInterval;
            return this;
        }

        /** Wraps every execution (a span, an Observation); default {@link ExecutionInterceptor#NONE}. */
        public Builder interceptor(ExecutionInterceptor interceptor) {
            this.interceptor = Objects.requireNonNull(interceptor, "interceptor");
            return this;
        }

        public IdempotencyEngine build() {
            return new IdempotencyEngine(this);
        }
    }
}
