package dev.exactly.psp;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * A charge as the processor recorded it under an idempotency key: captured, declined with a code, or a
 * hold (authorized, then captured, voided or expired). An answer carries the state when it was given;
 * a lookup carries the state now.
 *
 * @param id             processor id, {@code py_…}
 * @param amount         minor units asked for (the authorized amount of a hold)
 * @param currency       lower-case ISO 4217 code
 * @param status         captured, declined, authorized, voided or expired
 * @param idempotencyKey the key the charge was created under
 * @param declineCode    why it was declined ({@code card_declined}, {@code insufficient_funds}, …); null
 *                       unless declined
 * @param created        creation time, whole seconds (as sent on the wire)
 * @param source         the card token charged
 * @param description    the request's description, if any
 * @param metadata       the request's metadata
 * @param amountCaptured minor units captured: the amount when captured at once, the captured part of a
 *                       hold, 0 when nothing moved
 * @param amountRefunded minor units refunded so far (never above {@code amountCaptured})
 * @param expiresAt      when an uncaptured hold expires (whole seconds); null for a charge captured or
 *                       declined at once
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
        Map<String, String> metadata,
        long amountCaptured,
        long amountRefunded,
        @Nullable Instant expiresAt) {

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
        if (amountCaptured < 0
                || amountCaptured > amount
                || (status == ChargeStatus.CAPTURED) != (amountCaptured > 0)) {
            throw new IllegalArgumentException("amountCaptured must be in (0, amount] exactly when captured");
        }
        if (amountRefunded < 0 || amountRefunded > amountCaptured) {
            throw new IllegalArgumentException("amountRefunded must be in [0, amountCaptured]");
        }
        metadata = Collections.unmodifiableMap(new TreeMap<>(metadata));
    }

    /** True when the money moved (at once, or by capturing the hold). */
    public boolean captured() {
        return status == ChargeStatus.CAPTURED;
    }

    /** True while the hold stands: it may still be captured or voided. */
    public boolean authorized() {
        return status == ChargeStatus.AUTHORIZED;
    }

    /** What may still be refunded: captured minus refunded. */
    public long refundable() {
        return amountCaptured - amountRefunded;
    }
}
