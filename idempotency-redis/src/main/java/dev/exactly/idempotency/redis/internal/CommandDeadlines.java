package dev.exactly.idempotency.redis.internal;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.internal.ExceptionFactory;
import io.lettuce.core.internal.Exceptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Bounds the store's wait for each command's answer without a timed wait per command. A timed wait
 * ({@code LettuceFutures.awaitOrCancel}, {@code CompletableFuture.get(timeout)}) parks the waiting
 * (virtual) thread with a timeout, which schedules a task in the JDK's delay scheduler and cancels it
 * again when the answer comes, waking the scheduler's thread both times: about a microsecond of CPU per
 * command, on every command, for a timeout that almost never fires. Here a command waits without a timeout
 * as an entry pushed onto one of a few lock-free stacks (one compare-and-set), and one daemon thread of the
 * store takes the stacks every {@link #sweepNanos()}, drops the commands that are done and cancels every
 * command older than the timeout, which ends its wait with a {@code RedisCommandTimeoutException}, as
 * {@code awaitOrCancel} would. So a command waits at
 * most the timeout and one sweep: an eighth of the timeout, at most {@value #MAX_SWEEP_MILLIS} ms.
 *
 * <p>The thread starts with the first wait and ends at {@link #close()}; after that, waits are timed again
 * ({@code awaitOrCancel}). Thread-safe.
 */
public final class CommandDeadlines implements AutoCloseable {
    /** The longest time between two sweeps, milliseconds. */
    public static final long MAX_SWEEP_MILLIS = 50;

    private static final int STRIPES = 8;

    private final long timeoutNanos;
    private final long sweepNanos;
    private final Stripe[] stripes = new Stripe[STRIPES];
    private final ReentrantLock lifecycle = new ReentrantLock();
    private final String threadName;
    private volatile @Nullable Thread sweeper;
    private volatile boolean closed;

    /** Deadlines of {@code timeout} after each command is sent; {@code threadName} names the sweeping thread. */
    public CommandDeadlines(Duration timeout, String threadName) {
        this.timeoutNanos = timeout.toNanos();
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("a command timeout is positive");
        }
        this.sweepNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1),
                Math.min(TimeUnit.MILLISECONDS.toNanos(MAX_SWEEP_MILLIS), timeoutNanos / 8));
        this.threadName = threadName;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Stripe();
        }
    }

    /** How often the sweeping thread looks for overdue commands. */
    public long sweepNanos() {
        return sweepNanos;
    }

    /**
     * The answer of {@code command}, waited for at most the timeout and one sweep; then the command is
     * cancelled and {@code RedisCommandTimeoutException} thrown. Redis errors are thrown as
     * {@code awaitOrCancel} throws them; an interrupt cancels the command and throws
     * {@code RedisCommandInterruptedException} with the thread's interrupt status set.
     */
    public <T> T await(RedisFuture<T> command) {
        if (sweeper == null && !start()) {
            return LettuceFutures.awaitOrCancel(command, timeoutNanos, TimeUnit.NANOSECONDS);
        }
        Waiting waiting = new Waiting(command, System.nanoTime() + timeoutNanos);
        stripes[(int) (Thread.currentThread().threadId() & (STRIPES - 1))].push(waiting);
        if (closed) { // the sweeper may be gone: a close that this wait saw only after pushing
            return LettuceFutures.awaitOrCancel(command, timeoutNanos, TimeUnit.NANOSECONDS);
        }
        try {
            return command.get();
        } catch (InterruptedException e) {
            command.cancel(true);
            Thread.currentThread().interrupt();
            throw new RedisCommandInterruptedException(e);
        } catch (ExecutionException | CancellationException e) {
            if (waiting.overdue) {
                throw ExceptionFactory.createTimeoutException(Duration.ofNanos(timeoutNanos));
            }
            throw Exceptions.bubble(e);
        }
    }

    /** How many commands are waited for now (tests). */
    int waitingCommands() {
        int count = 0;
        for (Stripe stripe : stripes) {
            count += stripe.waiting();
        }
        return count;
    }

    /** Stops the sweeping thread; later waits are timed ({@code awaitOrCancel}). Idempotent. */
    @Override
    public void close() {
        lifecycle.lock();
        try {
            closed = true;
            Thread running = sweeper;
            if (running != null) {
                LockSupport.unpark(running);
            }
        } finally {
            lifecycle.unlock();
        }
    }

    /** Starts the sweeping thread unless closed; whether it runs. */
    private boolean start() {
        lifecycle.lock();
        try {
            if (closed) {
                return false;
            }
            if (sweeper == null) {
                Thread thread = new Thread(this::sweep, threadName);
                thread.setDaemon(true);
                thread.start();
                sweeper = thread;
            }
            return true;
        } finally {
            lifecycle.unlock();
        }
    }

    private void sweep() {
        List<Waiting> overdue = new ArrayList<>();
        while (!closed) {
            LockSupport.parkNanos(this, sweepNanos);
            long now = System.nanoTime();
            for (Stripe stripe : stripes) {
                stripe.sweep(now, overdue);
            }
            for (Waiting waiting : overdue) {
                waiting.command.cancel(true);
            }
            overdue.clear();
        }
        // waits that began before the close: their commands end with the connection, or here at their deadline
        while (true) {
            long now = System.nanoTime();
            boolean any = false;
            for (Stripe stripe : stripes) {
                any |= stripe.sweep(now, overdue);
            }
            for (Waiting waiting : overdue) {
                waiting.command.cancel(true);
            }
            overdue.clear();
            if (!any) {
                return;
            }
            LockSupport.parkNanos(this, sweepNanos);
        }
    }

    /** One command waited for, pushed onto a stripe's stack when its wait begins. */
    private static final class Waiting {
        final RedisFuture<?> command;
        final long deadline;
        volatile boolean overdue;
        @Nullable Waiting next;

        Waiting(RedisFuture<?> command, long deadline) {
            this.command = command;
            this.deadline = deadline;
        }
    }

    /**
     * A lock-free stack of waiting commands: a wait pushes its entry (one compare-and-set) and leaves it
     * there; the sweeping thread takes the whole stack, drops the commands that are done, cancels those
     * past their deadline and pushes the rest back. A waiter never unlinks anything.
     */
    private static final class Stripe {
        private final AtomicReference<@Nullable Waiting> head = new AtomicReference<>();

        void push(Waiting waiting) {
            Waiting first;
            do {
                first = head.get();
                waiting.next = first;
            } while (!head.compareAndSet(first, waiting));
        }

        /**
         * Takes the stack, adds the entries past their deadline at {@code now} to {@code overdue} (marked),
         * and pushes back those still waiting; whether any still wait.
         */
        boolean sweep(long now, List<Waiting> overdue) {
            Waiting waiting = head.getAndSet(null);
            Waiting keptHead = null;
            Waiting keptTail = null;
            while (waiting != null) {
                Waiting next = waiting.next;
                if (!waiting.command.isDone()) {
                    if (now - waiting.deadline >= 0) {
                        waiting.overdue = true;
                        overdue.add(waiting);
                    } else {
                        waiting.next = null;
                        if (keptTail == null) {
                            keptHead = waiting;
                        } else {
                            keptTail.next = waiting;
                        }
                        keptTail = waiting;
                    }
                }
                waiting = next;
            }
            if (keptHead == null || keptTail == null) {
                return false;
            }
            Waiting first;
            do {
                first = head.get();
                keptTail.next = first;
            } while (!head.compareAndSet(first, keptHead));
            return true;
        }

        /** The commands on the stack that are not done yet (tests; a racy count). */
        int waiting() {
            int count = 0;
            for (Waiting waiting = head.get(); waiting != null; waiting = waiting.next) {
                if (!waiting.command.isDone()) {
                    count++;
                }
            }
            return count;
        }
    }
}
