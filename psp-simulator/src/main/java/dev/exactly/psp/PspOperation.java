package dev.exactly.psp;

import java.util.Locale;

/**
 * The requests that take an {@code Idempotency-Key} and can move money; each has its own keys, faults
 * and counters ({@link PspStats#operation(PspOperation)}).
 */
public enum PspOperation {
    /** {@code POST /v1/charges}: capture at once, or authorize (a hold). */
    CHARGE,
    /** {@code POST /v1/charges/{id}/capture}: capture a hold, fully or partly. */
    CAPTURE,
    /** {@code POST /v1/charges/{id}/void}: release a hold. */
    VOID,
    /** {@code POST /v1/refunds}: give captured money back. */
    REFUND;

    /** The lower-case form used on the wire ({@code charge}, {@code capture}, {@code void}, {@code refund}). */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@link #wireName()}. */
    public static PspOperation fromWire(String value) {
        for (PspOperation o : values()) {
            if (o.wireName().equals(value)) {
                return o;
            }
        }
        throw new IllegalArgumentException("unknown operation: " + value);
    }
}
