package dev.exactly.idempotency;

import dev.exactly.idempotency.IdempotencyListener.RenewalResult;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Keeps one owner's lease alive while its work runs, and tells the owner when it may have lost it. The
 * engine starts one for every action it runs; code that claims records through the store SPI directly
 * (a durable tier finishing its records in its own transactions) starts one around its long steps:
 *
 * <pre>{@code
 * try (LeaseKeeper keeper = LeaseKeeper.start(store, key, owner, lease, KeepAlive.ofDefaults(), result -> {})) {
 *     callTheBank();                 // may take longer than the lease: the lease is renewed meanwhile
 *     if (keeper.isLost()) { ... }   // another owner may have taken over: stop before the next side effect
 * }
 * }</pre>
 *
 * <p>While {@link KeepAlive#enabled() enabled}, the lease is renewed every {@link KeepAlive#interval third
 * of it} ({@link IdempotencyStore#renew}, fenced by the owner token),
 * each time to {@code lease} from then, but never past {@link KeepAlive#maxHold()} after the start. A
 * renewal the store refuses ends the keep-alive ({@link RenewalResult#LOST}); one the store does not
 * answer is retried soon ({@link RenewalResult#FAILED}), until the store answers. {@link #close()} stops
 * it at once: no renewal starts after it, and the answer of one already sent is ignored (renewals are
 * fenced and change nothing once the owner has finished). A frozen process renews nothing, so its lease
 * runs out like a dead one's.
 *
 * <p>Until the first renewal is due, a keeper is only an entry in one shared timer (a daemon thread that
 * starts on first use and ends after a minute without entries): most work finishes long before a third of
 * its lease, and then {@code close} just removes the entry, so a short action costs no thread of its own.
 * When the first renewal is due, the keeper starts a virtual thread of its own, which renews from then
 * on. That thread ends with the work ({@code close}), at the max hold, or when the lease is lost, so
 * keepers never outnumber the work in progress and none outlives the max hold. A keeper is thread-safe.
 */
public final class LeaseKeeper implements AutoCloseable {
    private static final ThreadFactory THREADS = Thread.ofVirtual().name("exactly-lease-keeper-", 0).factory();
    /** Holds every keeper until its first renewal is due; entries of finished work are removed at once. */
    private static final ScheduledThreadPoolExecutor TIMER = timer();
    private static final long MIN_EXTENSION_NANOS = Duration.ofMillis(1).toNanos();
    /** How often an unanswered renewal is retried within one interval. */
    private static final int RETRIES_PER_INTERVAL = 3;

    private final IdempotencyStore store;
    private final ScopeKey key;
    private final OwnerToken owner;
    private final long leaseNanos;
    private final long intervalNanos;
    private final long deadlineNanos;
    private final Consumer<RenewalResult> listener;
    /** The local estimate of the lease end (System.nanoTime), from the start of the last confirmed renewal. */
    private final AtomicLong leaseEnd;
    /** The store refused a renewal: another owner holds the key, or nobody does. */
    private volatile boolean refused;
    /** The lease ran past its end without a confirmed renewal: another owner may hold the key. */
    private volatile boolean doubted;
    private volatile boolean closed;
    private volatile @Nullable Thread thread;
    private final @Nullable ScheduledFuture<?> firstRenewal;

    private LeaseKeeper(IdempotencyStore store, ScopeKey key, OwnerToken owner, Duration lease, KeepAlive keepAlive,
            Consumer<RenewalResult> listener, long startNanos) {
        this.store = Objects.requireNonNull(store, "store");
        this.key = Objects.requireNonNull(key, "key");
        this.owner = Objects.requireNonNull(owner, "owner");
        this.listener = Objects.requireNonNull(listener, "listener");
        if (lease.toMillis() < 1) {
            throw new IllegalArgumentException("lease must be at least 1 ms");
        }
        this.leaseNanos = lease.toNanos();
        this.intervalNanos = KeepAlive.interval(lease).toNanos();
        this.deadlineNanos = startNanos + keepAlive.maxHold().toNanos();
        this.leaseEnd = new AtomicLong(startNanos + leaseNanos);
        if (keepAlive.enabled()) {
            long delay = startNanos + intervalNanos - System.nanoTime();
            this.firstRenewal = TIMER.schedule(() -> startRenewing(startNanos), delay, TimeUnit.NANOSECONDS);
        } else {
            this.firstRenewal = null;
        }
    }

    /** The first renewal is due: from now on a virtual thread of this keeper's renews. */
    private void startRenewing(long startNanos) {
        if (closed) {
            return;
        }
        Thread t = THREADS.newThread(() -> keepAlive(startNanos));
        thread = t;
        t.start();
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
                Thread.ofPlatform().daemon(true).name("exactly-lease-timer").factory());
        timer.setRemoveOnCancelPolicy(true);
        timer.setKeepAliveTime(1, TimeUnit.MINUTES);
        timer.allowCoreThreadTimeOut(true);
        return timer;
    }

    /**
     * Starts keeping {@code owner}'s lease on {@code key} alive; call it right after the claim (or a
     * renewal) that gave the owner {@code lease} from then.
     *
     * @param lease     the lease each renewal asks for (the policy's lease)
     * @param keepAlive whether to renew automatically, and for how long at most from now
     * @param listener  told of each renewal's result, on the keeper's thread; must be fast and not throw
     */
    public static LeaseKeeper start(IdempotencyStore store, ScopeKey key, OwnerToken owner, Duration lease,
            KeepAlive keepAlive, Consumer<RenewalResult> listener) {
        return new LeaseKeeper(store, key, owner, lease, keepAlive, listener, System.nanoTime());
    }

    /** As {@link #start}, for a lease that began at {@code startNanos} ({@link System#nanoTime()}), e.g. when its claim was sent. */
    static LeaseKeeper startedAt(IdempotencyStore store, ScopeKey key, OwnerToken owner, Duration lease,
            KeepAlive keepAlive, Consumer<RenewalResult> listener, long startNanos) {
        return new LeaseKeeper(store, key, owner, lease, keepAlive, listener, startNanos);
    }

    /** See {@link Lease#isLost()}. */
    public boolean isLost() {
        if (refused || doubted) {
            return true;
        }
        if (System.nanoTime() - leaseEnd.get() >= 0) {
            doubted = true; // once past its end, a lease stays in doubt: another owner may have taken it
            return true;
        }
        return false;
    }

    /**
     * Renews now to {@code extension} from now, on the caller's thread (an action asking for more time
     * than the policy's lease); the keep-alive does not shorten a lease extended this way.
     *
     * @return false when the store refused: the lease is lost
     * @throws StoreUnavailableException (or the store's runtime exception) when the store did not answer
     */
    public boolean renew(Duration extension) {
        long sent = System.nanoTime();
        boolean renewed;
        try {
            renewed = store.renew(key, owner, extension);
        } catch (RuntimeException e) {
            listener.accept(RenewalResult.FAILED);
            throw e;
        }
        confirm(renewed, sent, extension.toNanos());
        return renewed;
    }

    /** Stops the keep-alive: no renewal starts after this returns. Idempotent. */
    @Override
    public void close() {
        closed = true;
        ScheduledFuture<?> pending = firstRenewal;
        if (pending != null) {
            pending.cancel(false);
        }
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    private void confirm(boolean renewed, long sentNanos, long extensionNanos) {
        if (renewed) {
            leaseEnd.accumulateAndGet(sentNanos + extensionNanos, Math::max);
            listener.accept(RenewalResult.RENEWED);
        } else {
            refused = true;
            listener.accept(RenewalResult.LOST);
        }
    }

    private void keepAlive(long startNanos) {
        long next = startNanos + intervalNanos;
        while (true) {
            if (!parkUntil(next) || refused) {
                return;
            }
            long now = System.nanoTime();
            long extension = Math.min(leaseNanos, deadlineNanos - now);
            if (extension < MIN_EXTENSION_NANOS) {
                listener.accept(RenewalResult.MAX_HOLD);
                return;
            }
            if (leaseEnd.get() - now >= extension) {
                next = now + intervalNanos; // renewed further already (by the action): nothing to add
                continue;
            }
            Duration asked = Duration.ofMillis(extension / 1_000_000);
            boolean renewed;
            try {
                renewed = store.renew(key, owner, asked);
            } catch (RuntimeException unavailable) {
                if (closed) {
                    return;
                }
                listener.accept(RenewalResult.FAILED);
                next = System.nanoTime() + Math.max(intervalNanos / RETRIES_PER_INTERVAL, MIN_EXTENSION_NANOS);
                continue;
            }
            if (closed) {
                return; // the work finished meanwhile: this answer no longer matters
            }
            confirm(renewed, now, asked.toNanos());
            if (!renewed) {
                return;
            }
            if (extension < leaseNanos) {
                listener.accept(RenewalResult.MAX_HOLD); // this renewal reached the max hold: the last one
                return;
            }
            next = now + intervalNanos;
        }
    }

    /** Parks until {@code deadline} (System.nanoTime); false if closed meanwhile. */
    private boolean parkUntil(long deadline) {
        while (!closed) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return true;
            }
            LockSupport.parkNanos(this, left);
        }
        return false;
    }

    @Override
    public String toString() {
        return "LeaseKeeper[key=" + key + ", lost=" + (refused || doubted) + ", closed=" + closed + "]";
    }
}
