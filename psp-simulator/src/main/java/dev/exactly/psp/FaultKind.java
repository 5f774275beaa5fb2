package dev.exactly.psp;

import java.util.Locale;

/** The kinds of injected fault, as counted in {@link PspStats#faults()}. */
public enum FaultKind {
    /** Extra delay before the request is processed. */
    LATENCY,
    /** An injected 5xx answer before anything is recorded: nothing captured. */
    ERROR,
    /** The request hangs before anything is recorded, then gets a 504: nothing captured. */
    TIMEOUT,
    /**
     * The operation is committed (charge, capture, void or refund), then the request hangs, then gets a
     * 504. Also spelled {@code timeout-after-refund} or {@code timeout-after-commit} in a header.
     */
    TIMEOUT_AFTER_CAPTURE,
    /** The operation is committed, then the connection is closed without any response. */
    DROP_RESPONSE,
    /**
     * A decline forced by a fault rule or a per-request fault (test-card declines are not faults); on a
     * capture, void or refund: a refusal with that code.
     */
    DECLINE;

    /** The form used in headers and JSON: lower case with dashes, e.g. {@code drop-response}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** Parses {@link #wireName()}. */
    public static FaultKind fromWire(String value) {
        for (FaultKind k : values()) {
            if (k.wireName().equals(value)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown fault kind: " + value);
    }
}
