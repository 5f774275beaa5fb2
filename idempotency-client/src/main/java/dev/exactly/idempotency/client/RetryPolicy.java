package dev.exactly.idempotency.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * How one logical request is retried: capped exponential backoff with full jitter ({@link Backoff}),
 * bounded by a number of attempts and by an overall deadline, on connection errors, timeouts and the
 * {@link #retryableStatuses() retryable statuses}. A {@code Retry-After} answer wins over the computed
 * delay as long as it ends before the deadline. Immutable; build with {@link #ofDefaults()},
 * {@link #custom()} or {@link #from}.
 *
 * @param maxAttempts       attempts in all, the first one included (1 = never retry)
 * @param initialDelay      ceiling of the first backoff; it doubles per retry
 * @param maxDelay          ceiling of every computed backoff (the cap)
 * @param deadline          how long the whole request may take, first attempt to last answer, pauses
 *                          included; no attempt or pause is started that would end past it
 * @param attemptTimeout    how long one attempt may wait for its answer (cut to what is left of the
 *                          deadline)
 * @param retryableStatuses answers that mean "not now, same key later": by default 409 (in flight), 429,
 *                          502, 503, 504
 */
public record RetryPolicy(
        int maxAttempts,
        Duration initialDelay,
        Duration maxDelay,
        Duration deadline,
        Duration attemptTimeout,
        Set<Integer> retryableStatuses) {

    /** Default attempts: 6 (the first and five retries). */
    public static final int DEFAULT_MAX_ATTEMPTS = 6;
    /** Default first backoff ceiling: 0.5 s, as Stripe's clients. */
    public static final Duration DEFAULT_INITIAL_DELAY = Duration.ofMillis(500);
    /** Default cap: 5 s, as Stripe's clients. */
    public static final Duration DEFAULT_MAX_DELAY = Duration.ofSeconds(5);
    /** Default deadline: 30 s. */
    public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(30);
    /** Default attempt timeout: 10 s. */
    public static final Duration DEFAULT_ATTEMPT_TIMEOUT = Duration.ofSeconds(10);
    /** Default retryable statuses: 409, 429, 502, 503, 504. */
    public static final Set<Integer> DEFAULT_RETRYABLE_STATUSES = Set.of(409, 429, 502, 503, 504);
    /** The most attempts accepted. */
    public static final int MAX_ATTEMPTS_LIMIT = 100;

    private static final RetryPolicy DEFAULTS = new RetryPolicy(
            DEFAULT_MAX_ATTEMPTS,
            DEFAULT_INITIAL_DELAY,
            DEFAULT_MAX_DELAY,
            DEFAULT_DEADLINE,
            DEFAULT_ATTEMPT_TIMEOUT,
            DEFAULT_RETRYABLE_STATUSES);

    public RetryPolicy {
        Objects.requireNonNull(initialDelay, "initialDelay");
        Objects.requireNonNull(maxDelay, "maxDelay");
        Objects.requireNonNull(deadline, "deadline");
        Objects.requireNonNull(attemptTimeout, "attemptTimeout");
        Objects.requireNonNull(retryableStatuses, "retryableStatuses");
        if (maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS_LIMIT) {
            throw new IllegalArgumentException(
                    "maxAttempts must be between 1 and " + MAX_ATTEMPTS_LIMIT + ": " + maxAttempts);
        }
        if (initialDelay.toMillis() < 1) {
            throw new IllegalArgumentException("initialDelay must be at least 1 ms: " + initialDelay);
        }
        if (maxDelay.compareTo(initialDelay) < 0) {
            throw new IllegalArgumentException(
                    "maxDelay must not be shorter than initialDelay: " + maxDelay + " < " + initialDelay);
        }
        if (deadline.toMillis() < 1) {
            throw new IllegalArgumentException("deadline must be at least 1 ms: " + deadline);
        }
        if (attemptTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("attemptTimeout must be at least 1 ms: " + attemptTimeout);
        }
        for (Integer status : retryableStatuses) {
            if (status == null || status < 400 || status > 599) {
                throw new IllegalArgumentException("retryable statuses are 4xx or 5xx: " + status);
            }
            if (status == 422) {
                throw new IllegalArgumentException(
                        "422 is never retried: a key reused with a different request, or a request that fails validation, "
                                + "does not heal by sending it again");
            }
        }
        retryableStatuses = Set.copyOf(retryableStatuses);
    }

    /** 6 attempts within 30 s, 10 s per attempt, backoff 0.5 s × 2ⁿ⁻¹ capped at 5 s, full jitter. */
    public static RetryPolicy ofDefaults() {
        return DEFAULTS;
    }

    /** The defaults with one attempt only: the rules still classify the answer, nothing is retried. */
    public static RetryPolicy noRetries() {
        return custom().maxAttempts(1).build();
    }

    public static Builder custom() {
        return new Builder(DEFAULTS);
    }

    public static Builder from(RetryPolicy base) {
        return new Builder(Objects.requireNonNull(base, "base"));
    }

    /** The backoff of this policy: {@link #initialDelay()} doubling per retry, capped at {@link #maxDelay()}. */
    public Backoff backoff() {
        return new Backoff(initialDelay, maxDelay);
    }

    /** Whether an answer with this status is retried (with the same key and the same bytes). */
    public boolean retries(int status) {
        return retryableStatuses.contains(status);
    }

    @Override
    public String toString() {
        return "RetryPolicy[maxAttempts=" + maxAttempts + ", initialDelay=" + initialDelay + ", maxDelay=" + maxDelay
                + ", deadline=" + deadline + ", attemptTimeout=" + attemptTimeout + ", retryableStatuses="
                + new TreeSet<>(retryableStatuses) + "]";
    }

    /** Validating builder; {@link #build()} checks every setting. */
    public static final class Builder {
        private int maxAttempts;
        private Duration initialDelay;
        private Duration maxDelay;
        private Duration deadline;
        private Duration attemptTimeout;
        private Set<Integer> retryableStatuses;

        private Builder(RetryPolicy base) {
            this.maxAttempts = base.maxAttempts;
            this.initialDelay = base.initialDelay;
            this.maxDelay = base.maxDelay;
            this.deadline = base.deadline;
            this.attemptTimeout = base.attemptTimeout;
            this.retryableStatuses = base.retryableStatuses;
        }

        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        public Builder initialDelay(Duration initialDelay) {
            this.initialDelay = initialDelay;
            return this;
        }

        public Builder maxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
            return this;
        }

        public Builder deadline(Duration deadline) {
            this.deadline = deadline;
            return this;
        }

        public Builder attemptTimeout(Duration attemptTimeout) {
            this.attemptTimeout = attemptTimeout;
            return this;
        }

        public Builder retryableStatuses(Set<Integer> statuses) {
            this.retryableStatuses = statuses;
            return this;
        }

        public RetryPolicy build() {
            return new RetryPolicy(maxAttempts, initialDelay, maxDelay, deadline, attemptTimeout, retryableStatuses);
        }
    }
}
