package dev.exactly.psp;

import org.jspecify.annotations.Nullable;

/**
 * The processor refused the request with a 4xx (other than the 402 of a decline or a failed refund,
 * which {@link PspClient#charge} and {@link PspClient#refund} return as results): missing or invalid
 * key (400), invalid body (400), key reused with another body (422, code
 * {@code idempotency_key_reused}), a capture or void refused (402, {@link #refused()}, recorded under the
 * key: e.g. {@code charge_already_captured}, {@code charge_voided}, {@code authorization_expired}).
 * Nothing was captured, voided or refunded by this request. The exceptions: 409 (a request with the key still in progress
 * elsewhere), and a 4xx that ended retries after an earlier attempt of the same call had an unknown
 * outcome; their outcome is unknown.
 */
public final class PspRequestException extends PspErrorResponseException {
    private final boolean earlierAttemptUnknown;

    public PspRequestException(int status, @Nullable String code, String message) {
        this(status, code, message, false);
    }

    /**
     * @param earlierAttemptUnknown whether an earlier attempt of the same call (same key) may have been
     *                              executed: then the outcome is unknown whatever this answer says
     */
    public PspRequestException(int status, @Nullable String code, String message, boolean earlierAttemptUnknown) {
        super(status, code, message);
        this.earlierAttemptUnknown = earlierAttemptUnknown;
    }

    /**
     * True for a 402: the processor decided and refused (a capture or void), recorded under the key, so
     * a retry with the same key gets the same refusal.
     */
    public boolean refused() {
        return status() == 402;
    }

    /** False, except for 409 (in progress) and after an earlier attempt with an unknown outcome. */
    @Override
    public boolean outcomeUnknown() {
        return status() == 409 || earlierAttemptUnknown;
    }
}
