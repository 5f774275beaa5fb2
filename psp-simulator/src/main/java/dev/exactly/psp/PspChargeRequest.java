package dev.exactly.psp;

import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Pattern;
import dev.exactly.psp.internal.Checks;
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
 */
public record PspChargeRequest(
        long amount, String currency, String source, @Nullable String description, Map<String, String> metadata) {

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
        if (metadata.size() > 50) {
            throw new IllegalArgumentException("metadata may hold at most 50 keys");
        }
        metadata.forEach((k, v) -> {
            Objects.requireNonNull(k, "metadata key");
            Objects.requireNonNull(v, "metadata value");
            if (k.isEmpty() || k.length() > 40) {
                throw new IllegalArgumentException("metadata keys must be 1-40 characters");
            }
            if (v.length() > 500) {
                throw new IllegalArgumentException("metadata values must be at most 500 characters");
            }
        });
        metadata = Collections.unmodifiableMap(new TreeMap<>(metadata));
    }

    /** A request without description or metadata. */
    public static PspChargeRequest of(long amount, String currency, String source) {
        return new PspChargeRequest(amount, currency, source, null, Map.of());
    }

    /** A copy with this description. */
    public PspChargeRequest withDescription(@Nullable String newDescription) {
        return new PspChargeRequest(amount, currency, source, newDescription, metadata);
    }

    /** A copy with this metadata (replacing any earlier metadata). */
    public PspChargeRequest withMetadata(Map<String, String> newMetadata) {
        return new PspChargeRequest(amount, currency, source, description, newMetadata);
    }
}
