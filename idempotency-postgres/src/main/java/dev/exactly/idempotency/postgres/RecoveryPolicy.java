package dev.exactly.idempotency.postgres;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * How recovery treats failed attempts of a phase: exponential backoff with full jitter, capped, and a
 * dead letter after the last attempt; and how much recovery takes on at once. Immutable; build with
 * {@link #ofDefaults()}, {@link #custom()} or {@link #from}.
 *
 * @param maxAttempts  failed attempts after which the phase is dead-lettered
 * @param firstDelay   the cap of the first backoff (doubling per attempt)
 * @param maxDelay     the cap of every backoff
 * @param parallelism  phases recovery resumes at once (and takes over per round); keep it below the
 *                     connection pool's size
 * @param interval     pause between two recovery rounds
 */
public record RecoveryPolicy(
        int maxAttempts, Duration firstDelay, Duration maxDelay, int parallelism, Duration interval) {

    private static final RecoveryPolicy DEFAULTS =
            new RecoveryPolicy(5, Duration.ofSeconds(1), Duration.ofSeconds(60), 4, Duration.ofSeconds(1));

    public RecoveryPolicy {
        Objects.requireNonNull(firstDelay, "firstDelay");
        Objects.requireNonNull(maxDelay, "maxDelay");
        Objects.requireNonNull(interval, "interval");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
        if (firstDelay.toMillis() < 1 || maxDelay.compareTo(firstDelay) < 0) {
            throw new IllegalArgumentException("firstDelay must be at least 1 ms and maxDelay at least firstDelay");
        }
        if (parallelism < 1 || parallelism > 256) {
            throw new IllegalArgumentException("parallelism must be between 1 and 256");
        }
        if (interval.toMillis() < 1) {
            throw new IllegalArgumentException("interval must be at least 1 ms");
        }
    }

    /** 5 attempts, backoff from 1 s doubling to at most 60 s with full jitter, 4 at once, every second. */
    public static RecoveryPolicy ofDefaults() {
        return DEFAULTS;
    }

    public static Builder custom() {
        return new Builder(DEFAULTS);
    }

    public static Builder from(RecoveryPolicy base) {
        return new Builder(base);
    }

    /**
     * The pause after the {@code attempt}-th failure: uniformly random in [0, min(maxDelay, firstDelay ×
     * 2^(attempt-1))] (full jitter, so phases one outage left behind are not all retried at once).
     */
    public Duration delayAfter(int attempt, RandomGenerator random) {
        long cap = firstDelay.toMillis() << Math.max(0, Math.min(attempt - 1, 30));
        long ceiling = Math.max(1, Math.min(maxDelay.toMillis(), cap));
        return Duration.ofMillis(random.nextLong(ceiling + 1));
    }

    /** Validating builder. */
    public static final class Builder {
        private int maxAttempts;
        private Duration firstDelay;
        private Duration maxDelay;
        private int parallelism;
        private Duration interval;

        private Builder(RecoveryPolicy base) {
            this.maxAttempts = base.maxAttempts;
            this.firstDelay = base.firstDelay;
            this.maxDelay = base.maxDelay;
            this.parallelism = base.parallelism;
            this.interval = base.interval;
        }

        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        public Builder firstDelay(Duration firstDelay) {
            this.firstDelay = firstDelay;
            return this;
        }

        public Builder maxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
            return this;
        }

        public Builder parallelism(int parallelism) {
            this.parallelism = parallelism;
            return this;
        }

        public Builder interval(Duration interval) {
            this.interval = interval;
            return this;
        }

        public RecoveryPolicy build() {
            return new RecoveryPolicy(maxAttempts, firstDelay, maxDelay, parallelism, interval);
        }
    }
}
