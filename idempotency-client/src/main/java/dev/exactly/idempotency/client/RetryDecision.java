package dev.exactly.idempotency.client;

import java.time.Duration;
import java.util.Objects;

/** What to do after an attempt, as decided by {@link RetrySequence}. */
public sealed interface RetryDecision {

    /** The answer is final: hand it to the caller. */
    record Final() implements RetryDecision {}

    /**
     * Send again, with the same key and the same bytes, after {@code delay}.
     *
     * @param delay      the pause before the next attempt
     * @param retryAfter whether the server asked for it ({@code Retry-After}) rather than the backoff
     */
    record Retry(Duration delay, boolean retryAfter) implements RetryDecision {
        public Retry {
            Objects.requireNonNull(delay, "delay");
            if (delay.isNegative()) {
                throw new IllegalArgumentException("delay must not be negative: " + delay);
            }
        }
    }

    /**
     * No final answer and no more attempts: the caller must try later with the same key.
     *
     * @param reason why the sequence ended
     * @param detail a sentence for messages and logs
     */
    record GiveUp(GiveUpReason reason, String detail) implements RetryDecision {
        public GiveUp {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /** Why a retry sequence ended without a final answer. */
    enum GiveUpReason {
        /** Every attempt was used. */
        ATTEMPTS,
        /** The next pause would end past the deadline, or leave the attempt after it too little of it. */
        DEADLINE,
        /** The server asked to come back ({@code Retry-After}) later than the deadline allows an attempt. */
        RETRY_AFTER_BEYOND_DEADLINE
    }
}
