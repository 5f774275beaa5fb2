package dev.exactly.idempotency.client;

import java.time.Duration;

/**
 * Pauses the calling thread between two attempts. The default is {@link Thread#sleep(Duration)}; tests
 * install one that advances a test clock instead, so they neither wait for real nor depend on timing.
 */
@FunctionalInterface
public interface Sleeper {

    /** {@link Thread#sleep(Duration)}. */
    Sleeper THREAD_SLEEP = Thread::sleep;

    /** Pauses for {@code duration} (zero: returns at once). */
    void sleep(Duration duration) throws InterruptedException;
}
