package dev.exactly.idempotency.client;

import java.io.IOException;
import java.net.http.HttpConnectTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * The retry rules for one logical request, attempt by attempt: every adapter (the blocking
 * {@link IdempotentHttpClient}, the Spring interceptors) asks it what to do after each attempt, so they
 * all apply the same rules. Not thread-safe: one sequence per logical request, used by one caller at a
 * time.
 *
 * <ul>
 *   <li>A connection error or timeout, or a {@linkplain RetryPolicy#retryableStatuses() retryable status}
 *       (409, 429, 502, 503, 504 by default), is retried; every other answer is final (2xx, 3xx, other
 *       4xx, 500 and other 5xx), and so is an answer the server marked as a replay, whatever its status
 *       (the recorded outcome: a retry gets it again). The caller checks for a reused key (422) before
 *       asking.</li>
 *   <li>The pause is {@code Retry-After} when the answer carries a valid one and it ends before the
 *       deadline; a {@code Retry-After} that ends past the deadline ends the sequence (the server said
 *       "not before then"). Otherwise the {@link Backoff} draws a pause with full jitter.</li>
 *   <li>The sequence ends after {@link RetryPolicy#maxAttempts()} attempts, or when the pause would end
 *       at or past the deadline, or would leave the next attempt less than {@link #shortestRetry()} (a
 *       tenth of a whole attempt) before it: an attempt cut that short is bound to time out, and it would
 *       deliver the request once more for nothing. {@link #attemptTimeout()} cuts each attempt to what is
 *       left.</li>
 * </ul>
 */
public final class RetrySequence {
    private final RetryPolicy policy;
    private final Backoff backoff;
    private final InstantSource clock;
    private final RandomGenerator random;
    private final Instant deadline;
    private int attempts;
    private boolean mayHaveExecuted;

    private RetrySequence(RetryPolicy policy, InstantSource clock, RandomGenerator random) {
        this.policy = policy;
        this.backoff = policy.backoff();
        this.clock = clock;
        this.random = random;
        this.deadline = clock.instant().plus(policy.deadline());
    }

    /** Starts a sequence now: the deadline counts from this call. */
    public static RetrySequence start(RetryPolicy policy, InstantSource clock, RandomGenerator random) {
        return new RetrySequence(
                Objects.requireNonNull(policy, "policy"),
                Objects.requireNonNull(clock, "clock"),
                Objects.requireNonNull(random, "random"));
    }

    public RetryPolicy policy() {
        return policy;
    }

    /** Attempts started so far. */
    public int attempts() {
        return attempts;
    }

    /** The instant past which nothing is started. */
    public Instant deadline() {
        return deadline;
    }

    /**
     * Whether any attempt so far may have reached the server: true unless every attempt failed before
     * its request could be sent (the connection was refused or could not be opened in time).
     */
    public boolean mayHaveExecuted() {
        return mayHaveExecuted;
    }

    /**
     * Counts the next attempt and returns its timeout: the policy's attempt timeout, cut to what is left of
     * the deadline (at least 1 ms).
     */
    public Duration beginAttempt() {
        attempts++;
        return attemptTimeout();
    }

    /** The timeout of an attempt started now. */
    public Duration attemptTimeout() {
        Duration left = Duration.between(clock.instant(), deadline);
        Duration timeout = left.compareTo(policy.attemptTimeout()) < 0 ? left : policy.attemptTimeout();
        return timeout.toMillis() < 1 ? Duration.ofMillis(1) : timeout;
    }

    /**
     * The attempt got an answer.
     *
     * @param status     its status
     * @param retryAfter its {@code Retry-After} header, or {@code null}
     */
    public RetryDecision afterAnswer(int status, @Nullable String retryAfter) {
        return afterAnswer(status, retryAfter, false);
    }

    /**
     * The attempt got an answer.
     *
     * @param status     its status
     * @param retryAfter its {@code Retry-After} header, or {@code null}
     * @param replayed   whether the server marked it as the replay of a recorded outcome ({@code
     *                   Idempotent-Replayed: true}): then it is final whatever its status, since every retry
     *                   would get it again (a 409 business conflict, a recorded 502)
     */
    public RetryDecision afterAnswer(int status, @Nullable String retryAfter, boolean replayed) {
        requireAttempt();
        mayHaveExecuted = true;
        if (replayed || !policy.retries(status)) {
            return new RetryDecision.Final();
        }
        Optional<Duration> asked = RetryAfter.parse(retryAfter, clock.instant());
        return next("answer " + status, asked.orElse(null));
    }

    /** The attempt failed without an answer (connection refused or lost, timeout). */
    public RetryDecision afterFailure(IOException error) {
        requireAttempt();
        if (!neverSent(error)) {
            mayHaveExecuted = true;
        }
        return next(describe(error), null);
    }

    /**
     * Whether the request certainly did not leave the client: the connection could not be opened.
     * Everything else (reset, closed, timed out waiting for the answer) may have reached the server.
     */
    @SuppressWarnings("ReferenceEquality") // identity: a throwable that is its own cause ends the walk
    public static boolean neverSent(IOException error) {
        if (error instanceof HttpConnectTimeoutException) {
            return true;
        }
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof java.net.ConnectException
                    || t instanceof java.nio.channels.UnresolvedAddressException
                    || t instanceof java.net.UnknownHostException
                    || t instanceof java.net.NoRouteToHostException) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /**
     * The least time a retry must have before the deadline once its pause is over: a tenth of a whole
     * attempt (the smaller of the attempt timeout and the deadline), at least 1 ms. Without it an attempt
     * that timed out a little early (a socket's timer rounds to the millisecond) was followed, after a pause
     * drawn near zero, by one of a millisecond or less: sent, certain to time out.
     */
    public Duration shortestRetry() {
        Duration whole =
                policy.attemptTimeout().compareTo(policy.deadline()) < 0 ? policy.attemptTimeout() : policy.deadline();
        Duration tenth = whole.dividedBy(10);
        return tenth.toMillis() < 1 ? Duration.ofMillis(1) : tenth;
    }

    private RetryDecision next(String what, @Nullable Duration retryAfter) {
        if (attempts >= policy.maxAttempts()) {
            return new RetryDecision.GiveUp(
                    RetryDecision.GiveUpReason.ATTEMPTS,
                    "no final answer after " + attempts + " attempt" + (attempts == 1 ? "" : "s") + "; last: " + what);
        }
        Instant now = clock.instant();
        Duration shortest = shortestRetry();
        if (retryAfter != null) {
            if (now.plus(retryAfter).plus(shortest).isAfter(deadline)) {
                return new RetryDecision.GiveUp(
                        RetryDecision.GiveUpReason.RETRY_AFTER_BEYOND_DEADLINE,
                        what + " asked to retry after " + retryAfter.toMillis() + " ms, too close to the deadline ("
                                + Duration.between(now, deadline).toMillis() + " ms left, an attempt takes at least "
                                + shortest.toMillis() + " ms) after " + attempts + " attempts");
            }
            return new RetryDecision.Retry(retryAfter, true);
        }
        Duration delay = backoff.delay(attempts, random);
        if (now.plus(delay).plus(shortest).isAfter(deadline)) {
            return new RetryDecision.GiveUp(
                    RetryDecision.GiveUpReason.DEADLINE,
                    "deadline of " + policy.deadline().toMillis() + " ms reached after " + attempts + " attempts ("
                            + Duration.between(now, deadline).toMillis() + " ms left, an attempt takes at least "
                            + shortest.toMillis() + " ms); last: " + what);
        }
        return new RetryDecision.Retry(delay, false);
    }

    private void requireAttempt() {
        if (attempts == 0) {
            throw new IllegalStateException("beginAttempt() first");
        }
    }

    private static String describe(IOException error) {
        String message = error.getMessage();
        return error.getClass().getSimpleName() + (message == null || message.isBlank() ? "" : " (" + message + ")");
    }
}
