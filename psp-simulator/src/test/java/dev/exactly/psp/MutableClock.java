package dev.exactly.psp;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** A clock that tests move by hand. */
final class MutableClock implements InstantSource {
    private final AtomicReference<Instant> now;

    MutableClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    void advance(Duration d) {
        now.updateAndGet(t -> t.plus(d));
    }
}
