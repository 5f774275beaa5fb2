package dev.exactly.psp;

/** The request was sent but no response came within the request timeout: the outcome is unknown. */
public final class PspTimeoutException extends PspException {

    public PspTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Always true. */
    @Override
    public boolean outcomeUnknown() {
        return true;
    }
}
