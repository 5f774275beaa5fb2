package dev.exactly.idempotency;

import java.time.Duration;

/**
 * Another request with the same key is still being processed (and, under a wait policy, did not finish
 * within the wait bound). The caller should retry after {@link #retryAfter()}.
 */
public final class RequestInFlightException extends IdempotencyException {
    private final Duration retryAfter;
    private final boolean waited;

    public RequestInFlightException(Duration retryAfter, boolean waited) {
        super(
                "idempotency_key_in_use",
                waited
                        ? "a request with this Idempotency-Key is still in progress after waiting for it"
                        : "a request with this Idempotency-Key is already in progress",
                null);
        this.retryAfter = retryAfter;
        this.waited = waited;
    }

    /** A hint for the client, never shorter than one second. */
    public Duration retryAfter() {
        return retryAfter;
    }

    /** Whether the engine waited for the other request before giving up. */
    public boolean waited() {
        return waited;
    }
}
