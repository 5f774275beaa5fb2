package dev.exactly.idempotency.redis.internal;

import dev.exactly.idempotency.internal.Slots;
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
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Bounds the store's wait for each command's answer without a timed wait per command. A timed wait
 * ({@code LettuceFutures.awaitOrCancel}, {@code CompletableFuture.get(timeout)}) parks the waiting
 * (virtual) thread with a timeout, which schedules a task in the JDK's delay scheduler and cancels it
 * again when the answer comes, waking the scheduler's thread both times: about a microsecond of CPU per
 * command, on every command, for a timeout that almost never fires. Here a command waits without a timeout
 * in a free slot of an array ({@link Slots}: one compare-and-set to take it, one to give it back when the wait
 * ends), and one daemon thread of the store reads the slots every {@link #sweepNanos()} and cancels every
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

    /** Slots for the commands waited for: more than the threads that ever wait at once. */
    private static final int SLOTS = 1024;

    private final long timeoutNanos;
    private final long sweepNanos;
    private final Slots<Waiting> waiting = new Slots<>(SLOTS);
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
        this.sweepNanos = Math.max(
                TimeUnit.MILLISECONDS.toNanos(1),
                Math.min(TimeUnit.MILLISECONDS.toNanos(MAX_SWEEP_MILLIS), timeoutNanos / 8));
        this.threadName = threadName;
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
        Waiting entry = new Waiting(command, System.nanoTime() + timeoutNanos);
        int slot = waiting.enter(entry);
        try {
            if (closed) { // the sweeper may be gone: a close that this wait saw only after entering
                return LettuceFutures.awaitOrCancel(command, timeoutNanos, TimeUnit.NANOSECONDS);
            }
            return command.get();
        } catch (InterruptedException e) {
            command.cancel(true);
            Thread.currentThread().interrupt();
            throw new RedisCommandInterruptedException(e);
        } catch (ExecutionException | CancellationException e) {
            if (entry.overdue) {
                throw ExceptionFactory.createTimeoutException(Duration.ofNanos(timeoutNanos));
            }
            throw Exceptions.bubble(e);
        } finally {
            waiting.leave(slot, entry);
        }
    }

    /** How many commands are waited for now (tests). */
    int waitingCommands() {
        int[] count = {0};
        waiting.forEach((slot, entry) -> {
            if (!entry.command.isDone()) {
                count[0]++;
            }
        });
        return count[0];
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
            cancelOverdue(overdue);
        }
        // waits that began before the close: their commands end with the connection, or here at their deadline
        while (!waiting.isEmpty()) {
            cancelOverdue(overdue);
            LockSupport.parkNanos(this, sweepNanos);
        }
    }

    /** Cancels every command waited for past its deadline (once: it is marked). */
    private void cancelOverdue(List<Waiting> overdue) {
        long now = System.nanoTime();
        waiting.forEach((slot, entry) -> {
            if (!entry.overdue && now - entry.deadline >= 0 && !entry.command.isDone()) {
                entry.overdue = true;
                overdue.add(entry);
            }
        });
        for (Waiting entry : overdue) {
            entry.command.cancel(true);
        }
        overdue.clear();
    }

    /** One command waited for, in a slot while its wait lasts. */
    private static final class Waiting {
        final RedisFuture<?> command;
        final long deadline;
        volatile boolean overdue;

        Waiting(RedisFuture<?> command, long deadline) {
            this.command = command;
            this.deadline = deadline;
        }
    }
}
