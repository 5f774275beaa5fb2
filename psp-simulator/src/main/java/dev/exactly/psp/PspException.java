package dev.exactly.psp;

import org.jspecify.annotations.Nullable;

/**
 * Why a {@link PspClient} call did not return a result. The one question a caller must answer is
 * {@link #outcomeUnknown()}: when true the processor may have captured (ask it later by idempotency
 * key, or retry with the same key); when false it definitely did not.
 */
public abstract sealed class PspException extends RuntimeException
        permits PspUnavailableException, PspTimeoutException, PspConnectionException, PspErrorResponseException {

    protected PspException(String message, @Nullable Throwable cause) {
        super(message, cause, false, cause != null);
    }

    /** True when the charge may or may not have happened. */
    public abstract boolean outcomeUnknown();
}
