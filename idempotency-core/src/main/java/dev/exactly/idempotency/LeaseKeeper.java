package dev.exactly.idempotency;

import dev.exactly.idempotency.IdempotencyListener.RenewalResult;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * <p>Until the first renewal is due, a keeper is only an entry in a shared list, linked in when it starts
 * and unlinked by {@code close} (a few writes under one of several small locks, nothing allocated), which
 * one daemon thread looks through when the earliest entry is due (it starts on first use and ends after a
 * minute without entries): most work finishes long before a third of its lease, so a short action costs
 * no thread and no timer task of its own. When the first renewal is due, the keeper starts a virtual
 * thread of its own, which renews from then on. That thread ends with the work ({@code close}), at the max hold, or when the lease is lost, so
 * keepers never outnumber the work in progress and none outlives the max hold. A keeper is thread-safe.
 */
public final class LeaseKeeper implements AutoCloseable {
    private static final ThreadFactory THREADS =
            Thread.ofVirtual().name("exactly-lease-keeper-", 0).factory();
    /** Holds every keeper until its first renewal is due; entries of finished work are removed at once. */
    private static final FirstRenewals FIRST_RENEWALS = new FirstRenewals();

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
    /** When the first renewal is due (System.nanoTime). */
    private final long firstDueNanos;
    /** The list this keeper waits in for its first renewal; null without keep-alive. Its lock guards the links. */
    private final FirstRenewals.@Nullable Stripe stripe;

    private @Nullable LeaseKeeper previous;
    private @Nullable LeaseKeeper next;
    private boolean linked;

    private LeaseKeeper(
            IdempotencyStore store,
            ScopeKey key,
            OwnerToken owner,
            Duration lease,
            KeepAlive keepAlive,
            Consumer<RenewalResult> listener,
            long startNanos) {
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
        this.firstDueNanos = startNanos + intervalNanos;
        if (keepAlive.enabled()) {
            this.stripe = FIRST_RENEWALS.stripe();
            FIRST_RENEWALS.add(this); // last: every field is set
        } else {
            this.stripe = null;
        }
    }

    /** The first renewal is due: from now on a virtual thread of this keeper's renews. */
    private void startRenewing() {
        if (closed) {
            return;
        }
        long startNanos = firstDueNanos - intervalNanos;
        Thread t = THREADS.newThread(() -> keepAlive(startNanos));
        thread = t;
        t.start();
    }

    /**
     * Starts keeping {@code owner}'s lease on {@code key} alive; call it right after the claim (or a
     * renewal) that gave the owner {@code lease} from then.
     *
     * @param lease     the lease each renewal asks for (the policy's lease)
     * @param keepAlive whether to renew automatically, and for how long at most from now
     * @param listener  told of each renewal's result, on the keeper's thread; must be fast and not throw
     */
    public static LeaseKeeper start(
            IdempotencyStore store,
            ScopeKey key,
            OwnerToken owner,
            Duration lease,
            KeepAlive keepAlive,
            Consumer<RenewalResult> listener) {
        return new LeaseKeeper(store, key, owner, lease, keepAlive, listener, System.nanoTime());
    }

    /** As {@link #start}, for a lease that began at {@code startNanos} ({@link System#nanoTime()}), e.g. when its claim was sent. */
    static LeaseKeeper startedAt(
            IdempotencyStore store,
            ScopeKey key,
            OwnerToken owner,
            Duration lease,
            KeepAlive keepAlive,
            Consumer<RenewalResult> listener,
            long startNanos) {
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
        if (stripe != null) {
            FIRST_RENEWALS.remove(this);
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

    /**
     * The keepers waiting for their first renewal: striped doubly linked lists (a keeper links itself into
     * its thread's stripe and unlinks itself on close, in constant time under that stripe's lock), and one
     * daemon thread that sleeps until the earliest entry is due, unlinks the entries that are due and starts
     * their renewals. A keeper due earlier than the thread's next wake-up wakes it. The thread starts on
     * first use and ends after a minute without entries.
     */
    static final class FirstRenewals {
        private static final int STRIPES = 16;
        private static final long IDLE_NANOS = Duration.ofMinutes(1).toNanos();

        /** One list; its monitor guards the links of every keeper in it. */
        static final class Stripe {
            private @Nullable LeaseKeeper head;
        }

        private final Stripe[] stripes = new Stripe[STRIPES];
        private final AtomicBoolean running = new AtomicBoolean();
        private volatile @Nullable Thread sweeper;
        /** Set while the sweeper looks through the lists: a keeper added meanwhile wakes it. */
        private volatile boolean sweeping;
        /** When the sweeper wakes next (System.nanoTime), valid while it is not sweeping. */
        private volatile long wakeAt;

        FirstRenewals() {
            for (int i = 0; i < STRIPES; i++) {
                stripes[i] = new Stripe();
            }
        }

        Stripe stripe() {
            return stripes[(int) Thread.currentThread().threadId() & (STRIPES - 1)];
        }

        void add(LeaseKeeper keeper) {
            Stripe stripe = Objects.requireNonNull(keeper.stripe);
            synchronized (stripe) {
                LeaseKeeper first = stripe.head;
                keeper.next = first;
                if (first != null) {
                    first.previous = keeper;
                }
                stripe.head = keeper;
                keeper.linked = true;
            }
            if (!running.get() && running.compareAndSet(false, true)) {
                Thread t = Thread.ofPlatform()
                        .daemon(true)
                        .name("exactly-lease-timer")
                        .unstarted(this::sweep);
                sweeper = t;
                t.start();
            } else if (sweeping || keeper.firstDueNanos - wakeAt < 0) {
                Thread t = sweeper;
                if (t != null) {
                    LockSupport.unpark(t);
                }
            }
        }

        void remove(LeaseKeeper keeper) {
            Stripe stripe = Objects.requireNonNull(keeper.stripe);
            synchronized (stripe) {
                if (keeper.linked) {
                    unlink(stripe, keeper);
                }
            }
        }

        private static void unlink(Stripe stripe, LeaseKeeper keeper) {
            LeaseKeeper before = keeper.previous;
            LeaseKeeper after = keeper.next;
            if (before == null) {
                stripe.head = after;
            } else {
                before.next = after;
            }
            if (after != null) {
                after.previous = before;
            }
            keeper.previous = null;
            keeper.next = null;
            keeper.linked = false;
        }

        /** The sweeper's loop: start the renewals that are due, sleep until the next one is. */
        private void sweep() {
            long idleSince = System.nanoTime();
            List<LeaseKeeper> due = new ArrayList<>();
            while (true) {
                sweeping = true;
                long now = System.nanoTime();
                boolean waiting = false;
                long earliest = 0;
                for (Stripe stripe : stripes) {
                    synchronized (stripe) {
                        LeaseKeeper keeper = stripe.head;
                        while (keeper != null) {
                            LeaseKeeper after = keeper.next;
                            if (keeper.firstDueNanos - now <= 0) {
                                unlink(stripe, keeper);
                                due.add(keeper);
                            } else if (!waiting || keeper.firstDueNanos - earliest < 0) {
                                waiting = true;
                                earliest = keeper.firstDueNanos;
                            }
                            keeper = after;
                        }
                    }
                }
                for (LeaseKeeper keeper : due) {
                    try {
                        keeper.startRenewing();
                    } catch (RuntimeException | Error noThread) {
                        // its lease runs out unrenewed, as a frozen owner's would; the others still start
                    }
                }
                due.clear();
                if (waiting) {
                    idleSince = now;
                } else if (now - idleSince >= IDLE_NANOS) {
                    running.set(false);
                    sweeping = false;
                    if (!anyWaiting() || !running.compareAndSet(false, true)) {
                        return; // idle; a keeper added from now on starts a new sweeper
                    }
                    continue;
                } else {
                    earliest = idleSince + IDLE_NANOS;
                }
                wakeAt = earliest;
                sweeping = false;
                long sleep = earliest - System.nanoTime();
                if (sleep > 0) {
                    LockSupport.parkNanos(this, sleep);
                }
            }
        }

        private boolean anyWaiting() {
            for (Stripe stripe : stripes) {
                synchronized (stripe) {
                    if (stripe.head != null) {
                        return true;
                    }
                }
            }
            return false;
        }
    }
}
