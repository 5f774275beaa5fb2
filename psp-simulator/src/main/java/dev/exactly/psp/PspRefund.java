package dev.exactly.psp;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * A refund as the processor recorded it under an idempotency key: succeeded (the money went back), or
 * failed with a code (nothing moved). Either outcome is final for its key and replayed.
 *
 * @param id             processor id, {@code re_…}
 * @param chargeId       the refunded charge's id
 * @param amount         minor units
 * @param currency       lower-case ISO 4217 code
 * @param status         succeeded or failed
 * @param idempotencyKey the key the refund was created under
 * @param failureCode    why it failed ({@code amount_too_large}, {@code charge_not_captured},
 *                       {@code currency_mismatch}, {@code resource_missing}, or an injected code); null
 *                       when it succeeded
 * @param created        creation time, whole seconds (as sent on the wire)
 * @param reason         the request's reason, if any
 * @param metadata       the request's metadata
 */
public record PspRefund(
        String id,
        String chargeId,
        long amount,
        String currency,
        RefundStatus status,
        String idempotencyKey,
        @Nullable String failureCode,
        Instant created,
        @Nullable String reason,
        Map<String, String> metadata) {

    public PspRefund {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(chargeId, "chargeId");
        Objects.requireNonNull(currency, "currency");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Objects.requireNonNull(created, "created");
        if ((status == RefundStatus.FAILED) != (failureCode != null)) {
            throw new IllegalArgumentException("a failure code is required exactly when the refund failed");
        }
        metadata = Collections.unmodifiableMap(new TreeMap<>(metadata));
    }

    /** True when the money went back. */
    public boolean succeeded() {
        return status == RefundStatus.SUCCEEDED;
    }
}
