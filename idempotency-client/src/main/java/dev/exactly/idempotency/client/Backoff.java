package dev.exactly.idempotency.client;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Capped exponential backoff with full jitter: before retry {@code n} (1 for the first retry) the
 * pause is drawn uniformly from {@code [0, min(cap, initial × 2ⁿ⁻¹)]}, in milliseconds. Full jitter
 * spreads the retries of many clients that failed together, so they do not come back together.
 *
 * @param initial the ceiling of the first pause (at least 1 ms)
 * @param cap     the ceiling of every pause (not shorter than {@code initial})
 */
public record Backoff(Duration initial, Duration cap) {

    public Backoff {
        Objects.requireNonNull(initial, "initial");
        Objects.requireNonNull(cap, "cap");
        if (initial.toMillis() < 1) {
            throw new IllegalArgumentException("initial backoff must be at least 1 ms: " + initial);
        }
        if (cap.compareTo(initial) < 0) {
            throw new IllegalArgumentException(
                    "the cap must not be shorter than the initial backoff: " + cap + " < " + initial);
        }
    }

    /** The ceiling of the pause before retry {@code n}: {@code min(cap, initial × 2ⁿ⁻¹)}. */
    public Duration ceiling(int retry) {
        if (retry < 1) {
            throw new IllegalArgumentException("retries are numbered from 1: " + retry);
        }
        long initialMillis = initial.toMillis();
        long capMillis = cap.toMillis();
        int doublings = Math.min(retry - 1, 62);
        long ceiling = initialMillis > (capMillis >> doublings) ? capMillis : initialMillis << doublings;
        return Duration.ofMillis(Math.min(ceiling, capMillis));
    }

    /** A pause before retry {@code n}, uniform in {@code [0, ceiling(n)]} milliseconds. */
    public Duration delay(int retry, RandomGenerator random) {
        long ceiling = ceiling(retry).toMillis();
        return Duration.ofMillis(random.nextLong(ceiling + 1));
    }
}
