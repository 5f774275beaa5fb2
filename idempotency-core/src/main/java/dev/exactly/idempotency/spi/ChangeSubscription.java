package dev.exactly.idempotency.spi;

import java.time.Duration;

/** A registration for change signals on one key; see {@link IdempotencyStore#subscribe}. */
public interface ChangeSubscription extends AutoCloseable {

    /**
     * Waits until a change is signalled or the timeout passes. A signal that arrived since the
     * subscription was made (or since the last call) returns at once.
     *
     * @return whether a signal arrived
     */
    boolean await(Duration timeout) throws InterruptedException;

    /** Stops listening; idempotent. */
    @Override
    void close();
}
