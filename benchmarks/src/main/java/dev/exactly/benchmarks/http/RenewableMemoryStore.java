package dev.exactly.benchmarks.http;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-memory endpoint's store: an {@link InMemoryIdempotencyStore} that the harness replaces, between two
 * phases, by a new one holding only the replay keys' records. The route keeps its records an hour (the replay
 * keys must outlive the run), and at 60,000-80,000 fresh keys a second a run's records of the in-memory
 * endpoint alone outgrow any bound that fits the benchmark's heap: the store filled (and refused claims,
 * failing closed, as it must) and, before that, its millions of live records made the collector's work, not
 * the guard's, the endpoint's cost. The other stores keep their records outside the serving JVM.
 */
final class RenewableMemoryStore extends ForwardingIdempotencyStore {
    private final InstantSource clock;
    private final int maxEntries;
    private final Set<ScopeKey> kept = ConcurrentHashMap.newKeySet();
    private volatile InMemoryIdempotencyStore current;
    private volatile boolean keeping;

    RenewableMemoryStore(InstantSource clock, int maxEntries) {
        this(clock, maxEntries, InMemoryIdempotencyStore.create(clock, maxEntries));
    }

    private RenewableMemoryStore(InstantSource clock, int maxEntries, InMemoryIdempotencyStore first) {
        super(first);
        this.clock = clock;
        this.maxEntries = maxEntries;
        this.current = first;
    }

    @Override
    protected IdempotencyStore delegate() {
        return current;
    }

    /** Runs {@code preparation}, remembering every key completed meanwhile as one to carry over. */
    void keepCompletedDuring(Preparation preparation) throws Exception {
        keeping = true;
        try {
            preparation.run();
        } finally {
            keeping = false;
        }
    }

    /** Something that completes the keys to keep. */
    @FunctionalInterface
    interface Preparation {
        void run() throws Exception;
    }

    /**
     * Replaces the store by a new one holding the kept keys' finished records, each with its fingerprint,
     * status and response as recorded (a replay of it is byte for byte the first answer), and its expiry.
     * Only between phases: a request in flight meanwhile would write to the store being dropped.
     *
     * @return the records carried over
     */
    int renew() {
        InMemoryIdempotencyStore next = InMemoryIdempotencyStore.create(clock, maxEntries);
        Instant now = clock.instant();
        int carried = 0;
        for (ScopeKey key : kept) {
            Optional<IdempotencyRecord> found = current.find(key);
            if (found.isEmpty() || !found.get().status().isFinished()) {
                throw new IllegalStateException("replay key " + key + " is not finished in the store: " + found);
            }
            IdempotencyRecord record = found.get();
            Duration left = Duration.between(now, record.expiresAt());
            OwnerToken owner = OwnerToken.random();
            if (!(next.claim(key, record.fingerprint(), owner, left, left) instanceof ClaimOutcome.Claimed)
                    || !next.complete(
                            key,
                            owner,
                            record.status(),
                            Objects.requireNonNull(record.response(), "a finished record holds its answer"))) {
                throw new IllegalStateException("could not carry " + key + " over");
            }
            carried++;
        }
        current = next;
        return carried;
    }

    @Override
    public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        boolean completed = current.complete(key, owner, outcome, response);
        if (completed && keeping) {
            kept.add(key);
        }
        return completed;
    }
}
