package dev.exactly.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** A clock the test moves by hand. */
public final class MutableClock implements InstantSource {
    private final AtomicReference<Instant> now;

    public MutableClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    public void advance(Duration by) {
        now.updateAndGet(t -> t.plus(by));
    }
}
