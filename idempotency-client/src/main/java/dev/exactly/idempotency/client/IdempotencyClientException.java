package dev.exactly.idempotency.client;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Why a logical request ended without a final answer to hand back. Every kind carries the key; none
 * carries a stack trace unless it wraps a cause.
 */
public abstract sealed class IdempotencyClientException extends RuntimeException
        permits RetriesExhaustedException, IdempotencyKeyReusedException, AnswerTooLargeException {

    private final String key;

    protected IdempotencyClientException(String key, String message, @Nullable Throwable cause) {
        super(message, cause, false, cause != null);
        this.key = Objects.requireNonNull(key, "key");
    }

    /** The idempotency key of the request. */
    public String key() {
        return key;
    }
}
