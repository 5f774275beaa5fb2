package dev.exactly.idempotency;

import dev.exactly.idempotency.IdempotencyListener.Repair;
import dev.exactly.idempotency.IdempotencyListener.RepairResult;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Finishes, in the background, an owner-fenced write whose answer the store did not give (a timeout, a
 * broken connection): the write may or may not have been applied, and only trying again tells. Each
 * repair runs on a virtual thread of its own and retries with doubling pauses until the store answers
 * (applied, or {@code false}: this owner holds nothing, so nothing is left to do) or its window closes.
 *
 * <p>Every write repaired here is fenced by an owner token, so repeating it is safe: a second
 * {@code release} or {@code complete} by the same owner finds nothing it owns and changes nothing.
 */
final class StoreRepairs {
    /** Repairs in progress at most; beyond that a repair is abandoned at once (and reported). */
    static final int MAX_PENDING = 10_000;
    /** A repair tries for at least this long, or the lease if that is longer. */
    static final Duration MIN_WINDOW = Duration.ofSeconds(60);

    private static final long FIRST_PAUSE_NANOS = Duration.ofMillis(50).toNanos();
    private static final long MAX_PAUSE_NANOS = Duration.ofSeconds(1).toNanos();

    private final IdempotencyListener listener;
    private final Semaphore slots = new Semaphore(MAX_PENDING);
    private final ThreadFactory threads =
            Thread.ofVirtual().name("exactly-store-repair-", 0).factory();

    StoreRepairs(IdempotencyListener listener) {
        this.listener = listener;
    }

    /**
     * Retries {@code write} until the store answers it.
     *
     * @param write an owner-fenced write: true if applied, false if the owner holds nothing
     */
    void submit(IdempotencyRequest request, Repair repair, BooleanSupplier write) {
        if (!slots.tryAcquire()) {
            listener.onRepair(request, repair, RepairResult.ABANDONED);
            return;
        }
        listener.onRepair(request, repair, RepairResult.SCHEDULED);
        Duration lease = request.policy().lease();
        long window = (lease.compareTo(MIN_WINDOW) > 0 ? lease : MIN_WINDOW).toNanos();
        threads.newThread(() -> {
                    try {
                        listener.onRepair(request, repair, retry(write, System.nanoTime() + window));
                    } finally {
                        slots.release();
                    }
                })
                .start();
    }

    private static RepairResult retry(BooleanSupplier write, long deadline) {
        long pause = FIRST_PAUSE_NANOS;
        while (true) {
            LockSupport.parkNanos(pause);
            try {
                return write.getAsBoolean() ? RepairResult.APPLIED : RepairResult.NOT_NEEDED;
            } catch (RuntimeException stillUnavailable) {
                if (System.nanoTime() - deadline >= 0) {
                    return RepairResult.ABANDONED;
                }
                pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
            }
        }
    }
}
