package dev.exactly.payments.edge;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A one-shot pause point. Armed, it holds the first request that passes until the test releases it (the
 * test breaks something meanwhile); disarmed, every request passes at once.
 */
final class Gate {
    private final String name;
    private final AtomicReference<CountDownLatch[]> armed = new AtomicReference<>();

    Gate(String name) {
        this.name = name;
    }

    /** Arms the gate; returns the pair (reached, release) of latches of this arming. */
    CountDownLatch[] arm() {
        CountDownLatch[] latches = {new CountDownLatch(1), new CountDownLatch(1)};
        armed.set(latches);
        return latches;
    }

    /** Disarms the gate: a request that passes later is not held. */
    void disarm() {
        armed.set(null);
    }

    /** Called by the code under test: holds here if armed (once), at most two minutes. */
    void pass() {
        CountDownLatch[] latches = armed.getAndSet(null);
        if (latches == null) {
            return;
        }
        latches[0].countDown();
        try {
            if (!latches[1].await(2, TimeUnit.MINUTES)) {
                throw new IllegalStateException("gate '" + name + "' was never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static boolean awaitReached(CountDownLatch[] latches, Duration timeout) throws InterruptedException {
        return latches[0].await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    static void release(CountDownLatch[] latches) {
        latches[1].countDown();
    }

    @Override
    public String toString() {
        return name;
    }
}
