package dev.exactly.payments.webhooks;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * When a failed delivery is tried again: after the {@code n}-th failed attempt, a pause drawn uniformly
 * from {@code [c/2, c]} where {@code c = min(maxDelay, initialDelay × 2ⁿ⁻¹)} (exponential backoff with
 * "equal" jitter: never sooner than half the ceiling, so a receiver that is down is not hammered, and
 * spread so that the deliveries one outage held back are not all retried at once). After
 * {@code maxAttempts} failed attempts the delivery is dead-lettered.
 *
 * @param maxAttempts  attempts before the dead letter (at least 1)
 * @param initialDelay the ceiling of the first pause
 * @param maxDelay     the ceiling of every pause
 */
public record RetrySchedule(int maxAttempts, Duration initialDelay, Duration maxDelay) {
    public RetrySchedule {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("max attempts must be positive");
        }
        if (initialDelay.toMillis() < 1 || maxDelay.compareTo(initialDelay) < 0) {
            throw new IllegalArgumentException("retry delays must be positive and ordered");
        }
    }

    /** The ceiling of the pause after the {@code attempts}-th failed attempt. */
    public Duration ceiling(int attempts) {
        int doublings = Math.min(Math.max(0, attempts - 1), 40);
        long millis = initialDelay.toMillis();
        for (int i = 0; i < doublings && millis < maxDelay.toMillis(); i++) {
            millis = Math.multiplyExact(millis, 2);
        }
        return Duration.ofMillis(Math.min(millis, maxDelay.toMillis()));
    }

    /** The pause after the {@code attempts}-th failed attempt, drawn from {@code [ceiling/2, ceiling]}. */
    public Duration delayAfter(int attempts, RandomGenerator random) {
        long ceiling = ceiling(attempts).toMillis();
        long floor = Math.max(1, ceiling / 2);
        return Duration.ofMillis(floor + random.nextLong(ceiling - floor + 1));
    }

    /** Whether a delivery that failed its {@code attempts}-th attempt is dead-lettered. */
    public boolean exhausted(int attempts) {
        return attempts >= maxAttempts;
    }
}
