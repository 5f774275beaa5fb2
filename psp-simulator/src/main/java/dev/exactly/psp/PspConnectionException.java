package dev.exactly.psp;

/**
 * The connection failed after the request may have been sent (reset, or closed without a response):
 * the outcome is unknown.
 */
public final class PspConnectionException extends PspException {

    public PspConnectionException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Always true. */
    @Override
    public boolean outcomeUnknown() {
        return true;
    }
}
