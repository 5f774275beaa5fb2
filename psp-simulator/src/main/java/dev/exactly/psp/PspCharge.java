package dev.exactly.psp;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * A charge as the processor recorded it under an idempotency key: captured, or declined with a code.
 *
 * @param id             processor id, {@code py_…}
 * @param amount         minor units
 * @param currency       lower-case ISO 4217 code
 * @param status         captured or declined
 * @param idempotencyKey the key the charge was created under
 * @param declineCode    why it was declined ({@code card_declined}, {@code insufficient_funds}, …); null when captured
 * @param created        creation time, whole seconds (as sent on the wire)
 * @param source         the card token charged
 * @param description    the request's description, if any
 * @param metadata       the request's metadata
 */
public record PspCharge(
        String id,
        long amount,
        String currency,
        ChargeStatus status,
        String idempotencyKey,
        @Nullable String declineCode,
        Instant created,
        String source,
        @Nullable String description,
        Map<String, String> metadata) {

    public PspCharge {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(currency, "currency");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Objects.requireNonNull(created, "created");
        Objects.requireNonNull(source, "source");
        if ((status == ChargeStatus.DECLINED) != (declineCode != null)) {
            throw new IllegalArgumentException("a decline code is required exactly when the charge is declined");
        }
        metadata = Collections.unmodifiableMap(new TreeMap<>(metadata));
    }

    /** True when the money moved. */
    public boolean captured() {
        return status == ChargeStatus.CAPTURED;
    }
}
