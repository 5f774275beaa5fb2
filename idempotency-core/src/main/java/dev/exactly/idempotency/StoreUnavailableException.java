package dev.exactly.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The store could not be reached, timed out or answered with an error. The engine fails closed: the
 * guarded action is not run.
 */
public final class StoreUnavailableException extends IdempotencyException {

    public StoreUnavailableException(String message, @Nullable Throwable cause) {
        super("idempotency_store_unavailable", message, cause);
    }
}
