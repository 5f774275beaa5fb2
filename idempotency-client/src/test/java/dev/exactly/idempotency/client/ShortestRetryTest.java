package dev.exactly.idempotency.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/**
 * No retry is started that could not finish: once its pause is over, an attempt needs a tenth of a whole
 * attempt before the deadline. Before, an attempt whose timer fired a fraction of a millisecond before the
 * deadline (a socket timeout is counted in whole milliseconds) was followed, after a pause drawn near zero,
 * by an attempt of one millisecond: the request was delivered once more, certain to time out (a processor
 * client with a 300 ms budget counted two timeouts of one call).
 */
class ShortestRetryTest {

    /** Always draws the shortest pause. */
    private static final RandomGenerator ZERO = () -> 0L;

    private static RetryPolicy budget(long millis) {
        return RetryPolicy.custom()
                .maxAttempts(3)
                .initialDelay(Duration.ofMillis(100))
                .maxDelay(Duration.ofSeconds(1))
                .deadline(Duration.ofMillis(millis))
                .attemptTimeout(Duration.ofMillis(millis))
                .build();
    }

    @Test
    void anAttemptThatTimedOutJustBeforeTheDeadlineIsTheLast() {
        ManualClock clock = new ManualClock();
        RetrySequence sequence = RetrySequence.start(budget(300), clock, ZERO);
        assertThat(sequence.beginAttempt()).isEqualTo(Duration.ofMillis(300));
        clock.advance(Duration.ofMillis(299).plusNanos(600_000)); // the timer fired 0.4 ms early

        RetryDecision decision = sequence.afterFailure(new HttpTimeoutException("request timed out"));

        assertThat(decision).isInstanceOfSatisfying(RetryDecision.GiveUp.class, giveUp -> {
            assertThat(giveUp.reason()).isEqualTo(RetryDecision.GiveUpReason.DEADLINE);
            assertThat(giveUp.detail()).contains("an attempt takes at least 30 ms");
        });
    }

    @Test
    void aRetryIsStartedWhileATenthOfAWholeAttemptIsLeft() {
        assertThat(RetrySequence.start(budget(300), new ManualClock(), ZERO).shortestRetry())
                .isEqualTo(Duration.ofMillis(30));
        RetryPolicy shortDeadline = RetryPolicy.custom()
                .deadline(Duration.ofSeconds(2))
                .attemptTimeout(Duration.ofSeconds(10))
                .build();
        assertThat(RetrySequence.start(shortDeadline, new ManualClock(), ZERO).shortestRetry())
                .as("the smaller of the attempt timeout and the deadline")
                .isEqualTo(Duration.ofMillis(200));
        assertThat(RetrySequence.start(budget(5), new ManualClock(), ZERO).shortestRetry())
                .isEqualTo(Duration.ofMillis(1));

        ManualClock clock = new ManualClock();
        RetrySequence sequence = RetrySequence.start(budget(300), clock, ZERO);
        sequence.beginAttempt();
        clock.advance(Duration.ofMillis(270)); // 30 ms left: one more attempt fits
        assertThat(sequence.afterFailure(new java.io.IOException("connection reset")))
                .isInstanceOf(RetryDecision.Retry.class);
        assertThat(sequence.beginAttempt()).isEqualTo(Duration.ofMillis(30));
        clock.advance(Duration.ofMillis(1)); // 29 ms left: not enough for another
        assertThat(sequence.afterFailure(new java.io.IOException("connection reset")))
                .isInstanceOf(RetryDecision.GiveUp.class);
    }

    @Test
    void aRetryAfterThatLeavesTooLittleOfTheDeadlineEndsTheSequence() {
        ManualClock clock = new ManualClock();
        RetrySequence sequence = RetrySequence.start(budget(9_500), clock, ZERO);
        sequence.beginAttempt();
        // 9 s asked, 9.5 s left: the attempt after it would have 0.5 s of the 0.95 s it needs
        assertThat(sequence.afterAnswer(503, "9"))
                .isInstanceOfSatisfying(
                        RetryDecision.GiveUp.class,
                        giveUp -> assertThat(giveUp.reason())
                                .isEqualTo(RetryDecision.GiveUpReason.RETRY_AFTER_BEYOND_DEADLINE));

        RetrySequence inTime = RetrySequence.start(budget(9_500), clock, ZERO);
        inTime.beginAttempt();
        assertThat(inTime.afterAnswer(503, "8")).isEqualTo(new RetryDecision.Retry(Duration.ofSeconds(8), true));
    }
}
