package dev.exactly.psp;

import dev.exactly.psp.internal.Checks;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/charges}: an amount in minor units of a currency, charged to a payment
 * source (a card token such as {@code tok_visa}). Validated on construction; the currency is
 * normalised to lower case.
 *
 * @param amount      positive amount in minor units (cents), at most {@value #MAX_AMOUNT}
 * @param currency    ISO 4217 code, three letters
 * @param source      card token, 1–255 printable characters
 * @param description optional free text, at most 1000 characters
 * @param metadata    up to 50 string pairs (keys ≤ 40 characters, values ≤ 500), e.g. the caller's own ids
 * @param capture     true (the default): capture at once; false: only authorize (place a hold), to be
 *                    captured or voided later
 */
public record PspChargeRequest(
        long amount,
        String currency,
        String source,
        @Nullable String description,
        Map<String, String> metadata,
        boolean capture) {

    /** The largest amount accepted, in minor units. */
    public static final long MAX_AMOUNT = 99_999_999_999L;

    private static final Pattern CURRENCY = Pattern.compile("[a-z]{3}");

    public PspChargeRequest {
        Objects.requireNonNull(currency, "currency");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(metadata, "metadata");
        if (amount < 1 || amount > MAX_AMOUNT) {
            throw new IllegalArgumentException("amount must be between 1 and " + MAX_AMOUNT + " minor units");
        }
        currency = currency.toLowerCase(Locale.ROOT);
        if (!CURRENCY.matcher(currency).matches()) {
            throw new IllegalArgumentException("currency must be a three-letter ISO 4217 code");
        }
        if (source.isEmpty() || source.length() > 255 || !Checks.printable(source)) {
            throw new IllegalArgumentException("source must be 1-255 printable ASCII characters");
        }
        if (description != null && description.length() > 1000) {
            throw new IllegalArgumentException("description must be at most 1000 characters");
        }
        metadata = Checks.metadata(metadata);
    }

    /** A request that captures at once. */
    public PspChargeRequest(
            long amount, String currency, String source, @Nullable String description, Map<String, String> metadata) {
        this(amount, currency, source, description, metadata, true);
    }

    /** A request without description or metadata that captures at once. */
    public static PspChargeRequest of(long amount, String currency, String source) {
        return new PspChargeRequest(amount, currency, source, null, Map.of(), true);
    }

    /** A copy with this description. */
    public PspChargeRequest withDescription(@Nullable String newDescription) {
        return new PspChargeRequest(amount, currency, source, newDescription, metadata, capture);
    }

    /** A copy with this metadata (replacing any earlier metadata). */
    public PspChargeRequest withMetadata(Map<String, String> newMetadata) {
        return new PspChargeRequest(amount, currency, source, description, newMetadata, capture);
    }

    /** A copy that only authorizes ({@code "capture": false}): a hold to capture or void later. */
    public PspChargeRequest authorizeOnly() {
        return new PspChargeRequest(amount, currency, source, description, metadata, false);
    }
}
