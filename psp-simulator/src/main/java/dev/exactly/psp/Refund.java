package dev.exactly.psp;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One entry of the processor's refund log: money went back once for this key.
 *
 * @param sequence       1-based position in the log
 * @param refundId       the refund's id ({@code re_…})
 * @param idempotencyKey the key of the refund request
 * @param chargeId       the refunded charge's id
 * @param amount         minor units
 * @param currency       lower-case ISO 4217 code
 * @param refundedAt     when the refund was committed
 * @param metadata       the refund request's metadata
 */
public record Refund(
        long sequence,
        String refundId,
        String idempotencyKey,
        String chargeId,
        long amount,
        String currency,
        Instant refundedAt,
        Map<String, String> metadata) {

    public Refund {
        Objects.requireNonNull(refundId, "refundId");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Objects.requireNonNull(chargeId, "chargeId");
        Objects.requireNonNull(currency, "currency");
        Objects.requireNonNull(refundedAt, "refundedAt");
        metadata = Collections.unmodifiableMap(new TreeMap<>(metadata));
    }
}
