package dev.exactly.psp;

import org.jspecify.annotations.Nullable;

/**
 * The processor answered 5xx, or an answer the client cannot read: the outcome is unknown (a 504 may
 * follow a capture).
 */
public final class PspServerException extends PspErrorResponseException {

    public PspServerException(int status, @Nullable String code, String message) {
        super(status, code, message);
    }

    /** Always true. */
    @Override
    public boolean outcomeUnknown() {
        return true;
    }
}
