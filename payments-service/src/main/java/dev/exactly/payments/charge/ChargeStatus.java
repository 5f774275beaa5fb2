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
    DEAD_LETTERED,
    /**
     * Authorized only ({@code "capture": false}): the processor holds the amount and the ledger holds it as
     * pending; a capture makes it {@link #SUCCEEDED}, a void (or the expiry of the authorization) {@link #VOIDED}.
     */
    AUTHORIZED,
    /** An authorization released by a void or by its expiry; nothing moved. */
    VOIDED;

    public String db() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static ChargeStatus fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }

    /** Whether the charge's creation has its final answer (an authorization's too, captured or not). */
    public boolean isFinished() {
        return this == SUCCEEDED || this == FAILED || this == AUTHORIZED || this == VOIDED;
    }
}
