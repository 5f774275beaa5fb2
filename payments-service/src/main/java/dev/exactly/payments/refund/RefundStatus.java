package dev.exactly.payments.refund;

import java.util.Locale;

/** Where a refund stands, as its row records it. */
public enum RefundStatus {
    /** Phase 1 committed: the amount is reserved on the charge; the processor may or may not have refunded. */
    PENDING,
    /** The processor refunded and the refund is journaled. */
    SUCCEEDED,
    /** The processor refused the refund: nothing moved, the reservation is released. */
    FAILED,
    /** The service refused it before the processor was asked (no such charge, not refundable, too much). */
    REFUSED,
    /** Recovery got no answer from the processor after its attempts: the amount stays reserved. */
    DEAD_LETTERED;

    public String db() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static RefundStatus fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }

    /** Whether the refund has its recorded answer. */
    public boolean isFinished() {
        return this == SUCCEEDED || this == FAILED || this == REFUSED;
    }
}
