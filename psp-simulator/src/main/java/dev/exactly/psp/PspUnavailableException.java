package dev.exactly.psp;

/** The connection could not be opened (refused, or connect timeout): nothing was sent, nothing captured. */
public final class PspUnavailableException extends PspException {

    public PspUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Always false: the request never reached the processor. */
    @Override
    public boolean outcomeUnknown() {
        return false;
    }
}
