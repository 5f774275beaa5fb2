package dev.exactly.idempotency.client;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;

/**
 * A test clock that moves only when told, and a {@link Sleeper} on it that records each pause and moves
 * the clock instead of sleeping.
 */
final class ManualClock implements InstantSource, Sleeper {
    private Instant now;
    private final List<Duration> pauses = new ArrayList<>();

    ManualClock(Instant start) {
        this.now = start;
    }

    ManualClock() {
        this(Instant.parse("2026-12-04T10:15:00Z"));
    }

    @Override
    public synchronized Instant instant() {
        return now;
    }

    synchronized void advance(Duration d) {
        now = now.plus(d);
    }

    @Override
    public synchronized void sleep(Duration duration) {
        pauses.add(duration);
        now = now.plus(duration);
    }

    synchronized List<Duration> pauses() {
        return List.copyOf(pauses);
    }
}
