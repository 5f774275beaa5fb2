package dev.exactly.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * Base of every typed outcome the engine raises instead of running an action. Each carries a stable,
 * Stripe-style {@link #code()} that adapters map to their protocol (the Servlet filter maps them to
 * RFC 9457 problem types). These exceptions describe expected situations, so they carry no stack trace
 * unless they wrap a cause.
 */
public abstract sealed class IdempotencyException extends RuntimeException
        permits InvalidIdempotencyKeyException,
                PayloadTooLargeException,
                JsonTooDeepException,
                IdempotencyKeyReusedException,
                RequestInFlightException,
                StoreUnavailableException,
                LeaseLostException {

    private final String code;

    protected IdempotencyException(String code, String message, @Nullable Throwable cause) {
        super(message, cause, false, cause != null);
        this.code = code;
    }

    /** A stable machine-readable code, e.g. {@code idempotency_key_reused}. */
    public String code() {
        return code;
    }
}
