package dev.exactly.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The store could not be reached, timed out or answered with an error. The engine fails closed: the
 * guarded action is not run.
 *
 * <p>Whether the failed operation may still have been applied by the store matters to whoever undoes
 * it: a timeout may hide an applied write, a store that refused up front ({@link #refused}) applied
 * nothing.
 */
public final class StoreUnavailableException extends IdempotencyException {
    private final boolean mayHaveApplied;

    public StoreUnavailableException(String message, @Nullable Throwable cause) {
        this(message, cause, true);
    }

    private StoreUnavailableException(String message, @Nullable Throwable cause, boolean mayHaveApplied) {
        super("idempotency_store_unavailable", message, cause);
        this.mayHaveApplied = mayHaveApplied;
    }

    /** The store refused the operation without applying any part of it (e.g. it is full). */
    public static StoreUnavailableException refused(String message) {
        return new StoreUnavailableException(message, null, false);
    }

    /** Whether the store may have applied the operation although it did not answer. */
    public boolean mayHaveApplied() {
        return mayHaveApplied;
    }
}
