package dev.exactly.psp;

import java.util.Locale;

/** What happened to a charge at the processor. */
public enum ChargeStatus {
    /** The money moved: the charge is in the capture log. */
    CAPTURED,
    /** The processor refused the charge; nothing moved. Replayed like any other outcome. */
    DECLINED;

    /** The lower-case form used on the wire ({@code captured}, {@code declined}). */
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
