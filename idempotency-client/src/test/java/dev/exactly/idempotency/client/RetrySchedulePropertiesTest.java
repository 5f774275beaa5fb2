package dev.exactly.idempotency.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/**
 * Properties of the retry schedule, over random policies and random sequences of answers: every computed
 * pause lies in {@code [0, min(cap, initial × 2ⁿ⁻¹)]}, a valid {@code Retry-After} (seconds or HTTP date)
 * is the pause exactly, the whole sequence (attempts and pauses) ends within the deadline, and the
 * attempts never exceed the bound.
 */
class RetrySchedulePropertiesTest {

    /** One attempt's outcome: an answer (status, optional Retry-After) or a failure, taking {@code millis}. */
    record Outcome(int status, boolean failure, Optional<RetryAfterValue> retryAfter, long millis) {}

    /** A Retry-After in seconds, or as an HTTP date that many milliseconds ahead (or behind). */
    record RetryAfterValue(boolean asDate, long seconds, long dateOffsetMillis) {
        String render(Instant now) {
            if (!asDate) {
                return Long.toString(seconds);
            }
            return DateTimeFormatter.RFC_1123_DATE_TIME.format(
                    now.plusMillis(dateOffsetMillis).atOffset(ZoneOffset.UTC));
        }
    }

    @Property(tries = 400)
    void everyPauseIsBoundedAndTheSequenceEndsWithinTheDeadline(
            @ForAll @IntRange(min = 1, max = 30) int maxAttempts,
            @ForAll @LongRange(min = 1, max = 2_000) long initialMillis,
            @ForAll @LongRange(min = 0, max = 10_000) long capExtraMillis,
            @ForAll @LongRange(min = 1, max = 120_000) long deadlineMillis,
            @ForAll @LongRange(min = 1, max = 30_000) long attemptTimeoutMillis,
            @ForAll("outcomes") @Size(min = 1, max = 40) List<Outcome> outcomes,
            @ForAll long seed) {
        RetryPolicy policy = RetryPolicy.custom()
                .maxAttempts(maxAttempts)
                .initialDelay(Duration.ofMillis(initialMillis))
                .maxDelay(Duration.ofMillis(initialMillis + capExtraMillis))
                .deadline(Duration.ofMillis(deadlineMillis))
                .attemptTimeout(Duration.ofMillis(attemptTimeoutMillis))
                .build();
        ManualClock clock = new ManualClock(Instant.parse("2026-12-04T10:15:00.250Z"));
        Instant start = clock.instant();
        RetrySequence sequence = RetrySequence.start(policy, clock, new Random(seed));
        List<Duration> pauses = new ArrayList<>();

        for (int i = 0; ; i++) {
            assertThat(sequence.attempts()).isLessThan(maxAttempts);
            Duration timeout = sequence.beginAttempt();
            assertThat(timeout).isPositive().isLessThanOrEqualTo(policy.attemptTimeout());
            assertThat(clock.instant().plus(timeout)).isBeforeOrEqualTo(sequence.deadline());
            if (i > 0) {
                assertThat(timeout)
                        .as("a retry has a tenth of a whole attempt at least")
                        .isGreaterThanOrEqualTo(sequence.shortestRetry());
            }

            Outcome outcome = outcomes.get(i % outcomes.size());
            boolean timedOut = outcome.millis() >= timeout.toMillis();
            clock.advance(timedOut ? timeout : Duration.ofMillis(outcome.millis()));
            Optional<Duration> asked = Optional.empty();
            RetryDecision decision;
            if (outcome.failure() || timedOut) {
                decision = sequence.afterFailure(new HttpTimeoutException("request timed out"));
            } else {
                String header =
                        outcome.retryAfter().map(v -> v.render(clock.instant())).orElse(null);
                asked = RetryAfter.parse(header, clock.instant());
                decision = sequence.afterAnswer(outcome.status(), header);
                if (!policy.retries(outcome.status())) {
                    assertThat(decision).isInstanceOf(RetryDecision.Final.class);
                }
            }

            if (decision instanceof RetryDecision.Retry retry) {
                if (asked.isPresent()) {
                    assertThat(retry.retryAfter()).isTrue();
                    assertThat(retry.delay()).as("Retry-After is the pause").isEqualTo(asked.get());
                } else {
                    assertThat(retry.retryAfter()).isFalse();
                    assertThat(retry.delay())
                            .isBetween(Duration.ZERO, policy.backoff().ceiling(sequence.attempts()));
                    assertThat(retry.delay()).isLessThanOrEqualTo(policy.maxDelay());
                }
                pauses.add(retry.delay());
                clock.sleep(retry.delay());
                assertThat(clock.instant()).isBefore(sequence.deadline());
                continue;
            }
            if (decision instanceof RetryDecision.GiveUp giveUp
                    && asked.isPresent()
                    && giveUp.reason() == RetryDecision.GiveUpReason.RETRY_AFTER_BEYOND_DEADLINE) {
                assertThat(clock.instant().plus(asked.get()).plus(sequence.shortestRetry()))
                        .as("only a Retry-After that leaves too little of the deadline ends it")
                        .isAfter(sequence.deadline());
            }
            break;
        }
        assertThat(sequence.attempts()).isBetween(1, maxAttempts);
        assertThat(Duration.between(start, clock.instant()))
                .as("attempts %s and pauses %s", sequence.attempts(), pauses)
                .isLessThanOrEqualTo(policy.deadline());
    }

    @Property(tries = 1000)
    void backoffDrawsFromZeroToTheCappedExponential(
            @ForAll @LongRange(min = 1, max = 5_000) long initialMillis,
            @ForAll @LongRange(min = 0, max = 60_000) long capExtraMillis,
            @ForAll @IntRange(min = 1, max = 200) int retry,
            @ForAll long seed) {
        Backoff backoff =
                new Backoff(Duration.ofMillis(initialMillis), Duration.ofMillis(initialMillis + capExtraMillis));
        long expectedCeiling = Math.min(
                initialMillis + capExtraMillis, retry - 1 >= 40 ? Long.MAX_VALUE : initialMillis * (1L << (retry - 1)));

        Duration delay = backoff.delay(retry, new Random(seed));

        assertThat(backoff.ceiling(retry)).isEqualTo(Duration.ofMillis(expectedCeiling));
        assertThat(delay).isBetween(Duration.ZERO, Duration.ofMillis(expectedCeiling));
    }

    @Provide
    Arbitrary<List<Outcome>> outcomes() {
        Arbitrary<Integer> status = Arbitraries.of(200, 201, 400, 402, 404, 409, 409, 429, 500, 502, 503, 503, 504);
        Arbitrary<Optional<RetryAfterValue>> retryAfter = Combinators.combine(
                        Arbitraries.of(true, false),
                        Arbitraries.longs().between(0, 90),
                        Arbitraries.longs().between(-5_000, 90_000))
                .as(RetryAfterValue::new)
                .optional(0.5);
        Arbitrary<Outcome> outcome = Combinators.combine(
                        status,
                        Arbitraries.of(false, false, false, true),
                        retryAfter,
                        Arbitraries.longs().between(0, 40_000))
                .as(Outcome::new);
        return outcome.list().ofMinSize(1).ofMaxSize(40);
    }
}
