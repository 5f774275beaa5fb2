package dev.exactly.payments.charge;

import java.util.Locale;

/** The life of a charge row. */
public enum ChargeStatus {
    /** Created; the processor's answer is not recorded yet. */
    PENDING,
    /** Captured by the processor and journaled. */
    SUCCEEDED,
    /** Declined by the processor (or resolved as failed by an operator); nothing journaled. */
    FAILED,
    /** Recovery gave up after its attempts; an operator must retry or resolve it. */
    DEAD_LETTERED;

    public String db() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static ChargeStatus fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }

    /** Whether the charge has its final answer. */
    public boolean isFinished() {
        return this == SUCCEEDED || this == FAILED;
    }
}
