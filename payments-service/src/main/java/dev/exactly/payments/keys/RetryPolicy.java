package dev.exactly.payments.keys;

import java.time.Duration;
import java.util.function.IntFunction;

/**
 * When an owner that got no answer tries again: how many attempts a request has before it is
 * dead-lettered, and the pause after the n-th failed attempt (capped, exponential, with full jitter, so
 * that the requests one outage left pending are not all retried at once).
 *
 * @param maxAttempts attempts before the dead letter (at least 1)
 * @param delayAfter  the pause after the given number of failed attempts (at least 1 ms)
 */
public record RetryPolicy(int maxAttempts, IntFunction<Duration> delayAfter) {
    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be positive");
        }
    }

    /** The pause after {@code attempts} failed attempts. */
    public Duration delayAfter(int attempts) {
        return delayAfter.apply(attempts);
    }
}
