package dev.exactly.psp;

import dev.exactly.psp.internal.Checks;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/refunds}: give back part or all of a captured charge. Validated on
 * construction; the currency is normalised to lower case.
 *
 * @param charge   the charge's processor id ({@code py_…})
 * @param amount   positive amount in minor units, at most {@link PspChargeRequest#MAX_AMOUNT}
 * @param currency ISO 4217 code, three letters; must be the charge's
 * @param reason   optional free text, at most 1000 characters
 * @param metadata up to 50 string pairs (keys ≤ 40 characters, values ≤ 500), e.g. the caller's refund id
 */
public record PspRefundRequest(
        String charge,
        long amount,
        String currency,
        @Nullable String reason,
        Map<String, String> metadata) {

    private static final Pattern CURRENCY = Pattern.compile("[a-z]{3}");

    public PspRefundRequest {
        Objects.requireNonNull(charge, "charge");
        Objects.requireNonNull(currency, "currency");
        Objects.requireNonNull(metadata, "metadata");
        if (charge.isEmpty() || charge.length() > 255) {
            throw new IllegalArgumentException("charge must be 1-255 characters");
        }
        if (amount < 1 || amount > PspChargeRequest.MAX_AMOUNT) {
            throw new IllegalArgumentException(
                    "amount must be between 1 and " + PspChargeRequest.MAX_AMOUNT + " minor units");
        }
        currency = currency.toLowerCase(Locale.ROOT);
        if (!CURRENCY.matcher(currency).matches()) {
            throw new IllegalArgumentException("currency must be a three-letter ISO 4217 code");
        }
        if (reason != null && reason.length() > 1000) {
            throw new IllegalArgumentException("reason must be at most 1000 characters");
        }
        metadata = Checks.metadata(metadata);
    }

    /** A refund without reason or metadata. */
    public static PspRefundRequest of(String charge, long amount, String currency) {
        return new PspRefundRequest(charge, amount, currency, null, Map.of());
    }

    /** A copy with this reason. */
    public PspRefundRequest withReason(@Nullable String newReason) {
        return new PspRefundRequest(charge, amount, currency, newReason, metadata);
    }

    /** A copy with this metadata (replacing any earlier metadata). */
    public PspRefundRequest withMetadata(Map<String, String> newMetadata) {
        return new PspRefundRequest(charge, amount, currency, reason, newMetadata);
    }
}
