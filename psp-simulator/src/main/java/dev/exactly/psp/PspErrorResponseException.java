package dev.exactly.psp;

import org.jspecify.annotations.Nullable;

/** The processor answered, with an error status: a 5xx ({@link PspServerException}) or a 4xx ({@link PspRequestException}). */
public abstract sealed class PspErrorResponseException extends PspException
        permits PspServerException, PspRequestException {

    private final int status;
    private final @Nullable String code;

    protected PspErrorResponseException(int status, @Nullable String code, String message) {
        super(message, null);
        this.status = status;
        this.code = code;
    }

    /** The HTTP status. */
    public int status() {
        return status;
    }

    /** The processor's error code (e.g. {@code idempotency_key_reused}, {@code processor_timeout}), if any. */
    public @Nullable String code() {
        return code;
    }
}
