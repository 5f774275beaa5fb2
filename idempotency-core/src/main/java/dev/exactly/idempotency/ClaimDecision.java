package dev.exactly.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * What one claim means for the request that made it: run the action as the new owner, replay the
 * recorded outcome, or find the key in flight. The engine decides with it, and so does every front end
 * that claims on its own (the transactional API of a durable store), so the rules cannot drift apart:
 * the fingerprint is compared on every path that returns an existing record, and a request that finds
 * the key in flight is told when to come back by one rule.
 */
public sealed interface ClaimDecision {

    /** The record as the claim left it, or found it. */
    IdempotencyRecord record();

    /** The request owns the key now and runs the action. */
    record Run(ClaimOutcome.Claimed claimed) implements ClaimDecision {
        @Override
        public IdempotencyRecord record() {
            return claimed.record();
        }

        public OwnerToken owner() {
            return claimed.owner();
        }

        /** Whether an earlier owner's lease had expired and this claim took the key over. */
        public boolean takeover() {
            return claimed.takeover();
        }
    }

    /** The key is finished: the recorded outcome is the answer. */
    record Replay(IdempotencyRecord record) implements ClaimDecision {
        public StoredResponse response() {
            return Objects.requireNonNull(record.response(), "a finished record has a response");
        }
    }

    /**
     * Another owner holds the key.
     *
     * @param retryAfter when to come back: the reject policy's interval, or for a request that waited,
     *                   until the owner's lease ends (1 to 60 s)
     */
    record InFlight(IdempotencyRecord record, Duration retryAfter) implements ClaimDecision {}

    /** The longest {@code Retry-After} of a request that waited for an owner in flight. */
    Duration MAX_RETRY_AFTER = Duration.ofSeconds(60);

    /**
     * The decision for {@code outcome}, a claim made by {@code request} at {@code now}.
     *
     * @param waited whether the request already waited for the owner (its {@code Retry-After} then
     *               follows the owner's lease instead of the reject policy)
     * @throws IdempotencyKeyReusedException the key is bound to another request
     */
    static ClaimDecision of(IdempotencyRequest request, ClaimOutcome outcome, Instant now, boolean waited) {
        if (outcome instanceof ClaimOutcome.Claimed claimed) {
            return new Run(claimed);
        }
        IdempotencyRecord record = outcome.record();
        if (!record.fingerprint().equals(request.fingerprint())) {
            throw new IdempotencyKeyReusedException(record.fingerprint(), request.fingerprint());
        }
        if (outcome instanceof ClaimOutcome.Finished) {
            return new Replay(record);
        }
        Duration retryAfter = !waited && request.policy().inFlight() instanceof InFlightPolicy.Reject reject
                ? reject.retryAfter()
                : untilLeaseEnds(record, now);
        return new InFlight(record, retryAfter);
    }

    /** Until the owner's lease ends, in whole seconds from 1 to {@link #MAX_RETRY_AFTER}. */
    static Duration untilLeaseEnds(IdempotencyRecord record, Instant now) {
        Instant leaseEnd = record.leaseExpiresAt();
        if (leaseEnd == null || !leaseEnd.isAfter(now)) {
            return Duration.ofSeconds(1);
        }
        long seconds =
                Math.max(1, Math.min(Duration.between(now, leaseEnd).toSeconds() + 1, MAX_RETRY_AFTER.toSeconds()));
        return Duration.ofSeconds(seconds);
    }
}
