package dev.exactly.idempotency.client;

import java.io.IOException;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Every attempt allowed by the {@link RetryPolicy} ended without a final answer (connection errors,
 * timeouts, 409, 429, 502-504). The request may have been executed: try again later with the
 * <strong>same key</strong> and the same bytes, never a new key.
 */
public final class RetriesExhaustedException extends IdempotencyClientException {
    private final RetryDecision.GiveUpReason reason;
    private final int attempts;
    private final boolean mayHaveExecuted;
    private final @Nullable IdempotentResponse lastAnswer;

    public RetriesExhaustedException(
            String key,
            RetryDecision.GiveUp giveUp,
            int attempts,
            boolean mayHaveExecuted,
            @Nullable IdempotentResponse lastAnswer,
            @Nullable IOException lastFailure) {
        super(key, message(key, giveUp, mayHaveExecuted), lastFailure);
        this.reason = giveUp.reason();
        this.attempts = attempts;
        this.mayHaveExecuted = mayHaveExecuted;
        this.lastAnswer = lastAnswer;
    }

    private static String message(String key, RetryDecision.GiveUp giveUp, boolean mayHaveExecuted) {
        return "no final answer for Idempotency-Key " + key + ": " + giveUp.detail() + ". "
                + (mayHaveExecuted
                        ? "The request may have been executed: retry later with the same Idempotency-Key, never a new one."
                        : "No attempt reached the server; retry later with the same Idempotency-Key.");
    }

    /** Why the retries ended. */
    public RetryDecision.GiveUpReason reason() {
        return reason;
    }

    /** Attempts made. */
    public int attempts() {
        return attempts;
    }

    /**
     * False only when no attempt can have reached the server (every connection was refused or could not be
     * opened); true otherwise, including after 409, 429 and 5xx answers.
     */
    public boolean mayHaveExecuted() {
        return mayHaveExecuted;
    }

    /** The last answer, when the last attempt got one (e.g. 503). */
    public Optional<IdempotentResponse> lastAnswer() {
        return Optional.ofNullable(lastAnswer);
    }

    /** The last attempt's failure, when it got no answer. */
    public Optional<IOException> lastFailure() {
        return Optional.ofNullable((IOException) getCause());
    }
}
