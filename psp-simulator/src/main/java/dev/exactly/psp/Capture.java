package dev.exactly.psp;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One entry of the processor's capture log: money moved once for this key. The capture's id is its
 * charge's id (a charge captures at most once).
 *
 * @param sequence       1-based position in the log
 * @param idempotencyKey the key of the request that captured: the charge request's when it captured at
 *                       once, the capture request's when a hold was captured
 * @param chargeId       the charge's id
 * @param amount         minor units
 * @param currency       lower-case ISO 4217 code
 * @param capturedAt     when the capture was committed
 * @param metadata       the charge request's metadata (lets a checker group captures by the caller's own ids)
 */
public record Capture(
        long sequence,
        String idempotencyKey,
        String chargeId,
        long amount,
        String currency,
        Instant capturedAt,
        Map<String, String> metadata) {

    public Capture {
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Objects.requireNonNull(chargeId, "chargeId");
        Objects.requireNonNull(currency, "currency");
        Objects.requireNonNull(capturedAt, "capturedAt");
        metadata = Collections.unmodifiableMap(new TreeMap<>(metadata));
    }
}
