package dev.exactly.payments.webhooks;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * The signature of a webhook delivery, and its verification by the receiver.
 *
 * <p>Every delivery carries {@code Exactly-Signature: t=<unix seconds>,v1=<hex>}, where {@code v1} is
 * HMAC-SHA-256, keyed with the endpoint's secret (its UTF-8 bytes, {@code whsec_…} included), over the
 * timestamp, a {@code .} and the exact body bytes. A receiver checks it with
 * {@link #verify(String, String, byte[], Duration)} on the raw body, before parsing it:
 * <pre>{@code
 * byte[] body = request.getInputStream().readAllBytes();
 * try {
 *     WebhookSignature.verify(secret, request.getHeader("Exactly-Signature"), body, Duration.ofMinutes(5));
 * } catch (WebhookSignature.InvalidSignatureException e) {
 *     return 400;                         // not from us, altered, or an old delivery replayed
 * }
 * String eventId = request.getHeader("Exactly-Event-Id");
 * if (alreadyProcessed(eventId)) return 200;  // deliveries are at least once: deduplicate on the id
 * }</pre>
 * A timestamp further than the tolerance from the receiver's clock is refused even with a valid
 * signature, so a captured delivery cannot be replayed later. Several {@code v1} values may be present;
 * one that matches is enough.
 */
public final class WebhookSignature {
    /** The header that carries the signature. */
    public static final String HEADER = "Exactly-Signature";
    /** The tolerance receivers should use unless they have a reason to choose another. */
    public static final Duration DEFAULT_TOLERANCE = Duration.ofMinutes(5);

    private static final String ALGORITHM = "HmacSHA256";
    private static final HexFormat HEX = HexFormat.of();

    private WebhookSignature() {}

    /** The header value for {@code body} sent at {@code timestamp}: {@code t=<seconds>,v1=<hex>}. */
    public static String header(String secret, Instant timestamp, byte[] body) {
        long t = timestamp.getEpochSecond();
        return "t=" + t + ",v1=" + HEX.formatHex(mac(secret, t, body));
    }

    /**
     * Verifies a delivery against the receiver's clock.
     *
     * @param secret    the endpoint's signing secret
     * @param header    the {@code Exactly-Signature} header's value (may be {@code null}: refused)
     * @param body      the raw request body, as received
     * @param tolerance how far the timestamp may be from now, either way
     * @throws InvalidSignatureException when the header is missing or malformed, the timestamp is outside
     *                                   the tolerance, or no signature matches
     */
    public static void verify(String secret, @Nullable String header, byte[] body, Duration tolerance) {
        verify(secret, header, body, tolerance, InstantSource.system());
    }

    /** {@link #verify(String, String, byte[], Duration)} against the given clock. */
    public static void verify(
            String secret, @Nullable String header, byte[] body, Duration tolerance, InstantSource clock) {
        if (header == null || header.isBlank()) {
            throw new InvalidSignatureException("no " + HEADER + " header");
        }
        long timestamp = -1;
        List<byte[]> signatures = new ArrayList<>();
        for (String part : header.split(",", -1)) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw new InvalidSignatureException("malformed " + HEADER + " header");
            }
            String name = part.substring(0, eq).strip();
            String value = part.substring(eq + 1).strip();
            switch (name) {
                case "t" -> {
                    try {
                        timestamp = Long.parseLong(value);
                    } catch (NumberFormatException e) {
                        throw new InvalidSignatureException("malformed timestamp");
                    }
                }
                case "v1" -> {
                    try {
                        signatures.add(HEX.parseHex(value));
                    } catch (IllegalArgumentException e) {
                        // not ours: another scheme's value can never match
                    }
                }
                default -> {
                    // other schemes are ignored
                }
            }
        }
        if (timestamp < 0) {
            throw new InvalidSignatureException("no timestamp");
        }
        if (signatures.isEmpty()) {
            throw new InvalidSignatureException("no v1 signature");
        }
        long age = Math.abs(clock.instant().getEpochSecond() - timestamp);
        if (age > tolerance.toSeconds()) {
            throw new InvalidSignatureException("timestamp outside the tolerance (" + age + " s from now)");
        }
        byte[] expected = mac(secret, timestamp, body);
        for (byte[] candidate : signatures) {
            if (MessageDigest.isEqual(expected, candidate)) {
                return;
            }
        }
        throw new InvalidSignatureException("no signature matches the body");
    }

    private static byte[] mac(String secret, long timestamp, byte[] body) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), ALGORITHM));
            mac.update((timestamp + ".").getBytes(StandardCharsets.US_ASCII));
            return mac.doFinal(body);
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HMAC-SHA-256 is not available", e);
        }
    }

    /** A delivery that does not verify; the message says why. Carries no stack trace. */
    public static final class InvalidSignatureException extends RuntimeException {
        public InvalidSignatureException(String message) {
            super(message, null, false, false);
        }
    }
}
