package dev.exactly.idempotency.tck;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The contract run against a deliberately broken store whose claim reads, then writes (the classic
 * find-then-create middleware). Not run directly (no Test suffix); {@link ContractCatchesBrokenStoresTest}
 * runs it and expects the race test to fail.
 */
class NonAtomicStoreContract extends IdempotencyStoreContract {

    @Override
    protected IdempotencyStore createStore() {
        return new NonAtomicStore(InMemoryIdempotencyStore.create());
    }

    /**
     * Delegates everything but claim, which it splits into a find and a separate claim. On each key, the
     * first two claims that find nothing meet in the window between their read and their write, and again
     * after their writes (each waits up to a second for the other), so both return a claim before either
     * can run and finish the action: the race happens on every run, however the machine schedules threads
     * (without the second meeting, a first claimer that finished before the second one's write left that
     * one a finished record to replay).
     */
    static final class NonAtomicStore extends ForwardingIdempotencyStore {
        private final Map<ScopeKey, CountDownLatch> windows = new ConcurrentHashMap<>();
        private final Map<ScopeKey, CountDownLatch> written = new ConcurrentHashMap<>();

        NonAtomicStore(InMemoryIdempotencyStore delegate) {
            super(delegate);
        }

        @Override
        public ClaimOutcome claim(
                ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
            Optional<IdempotencyRecord> existing = delegate().find(key);
            if (existing.isPresent()) {
                IdempotencyRecord record = existing.get();
                return record.status().isFinished()
                        ? new ClaimOutcome.Finished(record)
                        : new ClaimOutcome.InFlight(record);
            }
            meet(windows.computeIfAbsent(key, k -> new CountDownLatch(2))); // between the read and the write
            // "create": overwrite whatever is there now, as a find-then-create middleware does
            delegate()
                    .release(
                            key,
                            delegate().find(key).map(IdempotencyRecord::owner).orElse(OwnerToken.random()));
            ClaimOutcome outcome = delegate().claim(key, fingerprint, owner, lease, retention);
            meet(written.computeIfAbsent(key, k -> new CountDownLatch(2))); // both wrote before either acts
            return outcome;
        }

        private static void meet(CountDownLatch meeting) {
            meeting.countDown();
            try {
                meeting.await(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
