package dev.exactly.idempotency;

/** The request body is larger than the fingerprint cap, so it cannot be fingerprinted safely. */
public final class PayloadTooLargeException extends IdempotencyException {
    private final long limitBytes;

    public PayloadTooLargeException(long limitBytes) {
        super("payload_too_large", "request body exceeds the " + limitBytes + "-byte fingerprint limit", null);
        this.limitBytes = limitBytes;
    }

    public long limitBytes() {
        return limitBytes;
    }
}
