package dev.exactly.idempotency.spi;

import dev.exactly.idempotency.ScopeKey;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The in-process half of change notification that every store shares: a registry of subscriptions by
 * key. A store calls {@link #signal} when it learns that a key changed (from its own write, a Redis
 * pub/sub message, a PostgreSQL notification) and {@link #signalAll} when it may have missed messages
 * (after a reconnect), so that waiters re-read.
 */
public final class LocalWaiters {
    private final ConcurrentHashMap<ScopeKey, Set<Subscription>> byKey = new ConcurrentHashMap<>();

    /** An empty registry: a store holds one for its lifetime. */
    public LocalWaiters() {}

    /** Registers a subscription for {@code key}. */
    public ChangeSubscription subscribe(ScopeKey key) {
        Subscription subscription = new Subscription(key);
        byKey.compute(key, (k, set) -> {
            Set<Subscription> s = set != null ? set : ConcurrentHashMap.newKeySet();
            s.add(subscription);
            return s;
        });
        return subscription;
    }

    /** Wakes every subscription of {@code key}. */
    public void signal(ScopeKey key) {
        if (byKey.isEmpty()) {
            return; // the common case, nobody waits: no hash of the key (its 64 characters) to compute
        }
        Set<Subscription> set = byKey.get(key);
        if (set != null) {
            set.forEach(Subscription::signal);
        }
    }

    /** Wakes every subscription of every key. */
    public void signalAll() {
        byKey.values().forEach(set -> set.forEach(Subscription::signal));
    }

    /** Whether anybody in this process waits for {@code key} (stores may skip work otherwise). */
    public boolean hasWaiters(ScopeKey key) {
        return !byKey.isEmpty() && byKey.containsKey(key);
    }

    /** The number of keys with waiters, for tests and gauges. */
    public int waitingKeys() {
        return byKey.size();
    }

    private final class Subscription implements ChangeSubscription {
        private final ScopeKey key;
        private final Semaphore signals = new Semaphore(0);

        Subscription(ScopeKey key) {
            this.key = key;
        }

        void signal() {
            if (signals.availablePermits() == 0) {
                signals.release();
            }
        }

        @Override
        public boolean await(Duration timeout) throws InterruptedException {
            boolean signalled = signals.tryAcquire(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
            signals.drainPermits();
            return signalled;
        }

        @Override
        public void close() {
            byKey.computeIfPresent(key, (k, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
