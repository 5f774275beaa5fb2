package dev.exactly.idempotency.client;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Why a logical request ended without a final answer to hand back. Both kinds carry the key; neither
 * carries a stack trace unless it wraps a cause.
 */
public abstract sealed class IdempotencyClientException extends RuntimeException
        permits RetriesExhaustedException, IdempotencyKeyReusedException {

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
