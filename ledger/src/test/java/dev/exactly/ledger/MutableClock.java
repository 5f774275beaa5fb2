package dev.exactly.ledger;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** A test clock that moves only when told to. */
final class MutableClock implements InstantSource {
    private final AtomicReference<Instant> now;

    MutableClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    Instant advance(Duration step) {
        return now.updateAndGet(t -> t.plus(step));
    }
}
