package dev.exactly.psp;

import java.util.Locale;

/** What happened to a refund at the processor. */
public enum RefundStatus {
    /** The money went back: the refund is in the refund log. */
    SUCCEEDED,
    /** The processor refused the refund (see {@link PspRefund#failureCode()}); nothing moved. Replayed. */
    FAILED;

    /** The lower-case form used on the wire ({@code succeeded}, {@code failed}). */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@link #wireName()}. */
    public static RefundStatus fromWire(String value) {
        for (RefundStatus s : values()) {
            if (s.wireName().equals(value)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown refund status: " + value);
    }
}
