package dev.exactly.psp;

import org.jspecify.annotations.Nullable;

/**
 * The processor refused the request with a 4xx (other than the 402 of a decline, which
 * {@link PspClient#charge} returns as a declined {@link PspCharge}): missing or invalid key (400),
 * invalid body (400), key reused with another body (422, code {@code idempotency_key_reused}). Nothing
 * was captured by this request. The one exception is 409 (a request with the key still in progress
 * elsewhere), whose outcome is unknown.
 */
public final class PspRequestException extends PspErrorResponseException {

    public PspRequestException(int status, @Nullable String code, String message) {
        super(status, code, message);
    }

    /** False, except for 409 (in progress). */
    @Override
    public boolean outcomeUnknown() {
        return status() == 409;
    }
}
