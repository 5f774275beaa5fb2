package dev.exactly.psp;

import java.util.Locale;

/**
 * What happened to a charge at the processor. A charge sent with {@code "capture": true} (the default)
 * ends {@link #CAPTURED} or {@link #DECLINED} at once; one sent with {@code "capture": false} places a
 * hold ({@link #AUTHORIZED}) that is later captured, voided, or expires.
 */
public enum ChargeStatus {
    /** The money moved: the charge is in the capture log (refunds do not change this status). */
    CAPTURED,
    /** The processor refused the charge; nothing moved. Replayed like any other outcome. */
    DECLINED,
    /** A hold: the amount is reserved until it is captured, voided or expires; nothing moved yet. */
    AUTHORIZED,
    /** The hold was released by a void; it can no longer be captured. */
    VOIDED,
    /** The hold passed its expiry uncaptured; it can no longer be captured. */
    EXPIRED;

    /** The lower-case form used on the wire ({@code captured}, {@code declined}, {@code authorized}, …). */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@link #wireName()}. */
    public static ChargeStatus fromWire(String value) {
        for (ChargeStatus s : values()) {
            if (s.wireName().equals(value)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown charge status: " + value);
    }
}
