package dev.exactly.idempotency;

import dev.exactly.idempotency.internal.Hashing;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;
import org.erdtman.jcs.JsonCanonicalizer;
import org.jspecify.annotations.Nullable;

/**
 * Computes request fingerprints: SHA-256 over the method, the route template and the body.
 *
 * <p>A JSON body is first canonicalised by RFC 8785 (JSON Canonicalization Scheme), so key order,
 * whitespace and number spelling ({@code 1.0} vs {@code 1}) do not matter while any change of a value
 * does. Algorithm id {@value #JCS_SHA256}.
 *
 * <p>Two cases fall back to hashing the exact body bytes (algorithm id {@value #RAW_SHA256}): a body
 * that is not JSON, and a JSON body holding a number that an IEEE double cannot represent exactly
 * (RFC 8785 reads numbers as doubles, so {@code 9007199254740993} and {@code 9007199254740992} would
 * otherwise look alike and a different request could be taken for a replay). The fallback can only
 * turn an equivalent request into a mismatch, never a different request into a match.
 *
 * <p>Bodies larger than {@link #maxBodyBytes()} raise {@link PayloadTooLargeException}.
 */
public final class Fingerprinter {
    /** Algorithm id of the RFC 8785 canonical JSON fingerprint. */
    public static final String JCS_SHA256 = "sha256-jcs";
    /** Algorithm id of the exact-bytes fingerprint. */
    public static final String RAW_SHA256 = "sha256-raw";
    /** Default cap on a fingerprinted body: 1 MiB. */
    public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;

    private static final BigDecimal MAX_EXACT = BigDecimal.valueOf(1L << 53);

    private final int maxBodyBytes;

    private Fingerprinter(int maxBodyBytes) {
        if (maxBodyBytes <= 0) {
            throw new IllegalArgumentException("maxBodyBytes must be positive");
        }
        this.maxBodyBytes = maxBodyBytes;
    }

    public static Fingerprinter ofDefaults() {
        return new Fingerprinter(DEFAULT_MAX_BODY_BYTES);
    }

    public static Fingerprinter withMaxBodyBytes(int maxBodyBytes) {
        return new Fingerprinter(maxBodyBytes);
    }

    public int maxBodyBytes() {
        return maxBodyBytes;
    }

    /** Throws {@link PayloadTooLargeException} when a declared length exceeds the cap. */
    public void checkLength(long contentLength) {
        if (contentLength > maxBodyBytes) {
            throw new PayloadTooLargeException(maxBodyBytes);
        }
    }

    /**
     * Fingerprints a request.
     *
     * @param contentType the request's media type, or {@code null}; JSON is detected by a
     *     {@code json} media type or, without one, by parsing
     */
    public Fingerprint fingerprint(String method, String route, byte[] body, @Nullable String contentType) {
        checkLength(body.length);
        byte[] canonical = body.length == 0 || !mayBeJson(contentType) ? null : canonicalJson(body);
        MessageDigest digest = Hashing.sha256();
        Hashing.field(digest, method.toUpperCase(Locale.ROOT));
        Hashing.field(digest, route);
        Hashing.field(digest, canonical != null ? canonical : body);
        return new Fingerprint(canonical != null ? JCS_SHA256 : RAW_SHA256, Hashing.hex(digest.digest()));
    }

    private static boolean mayBeJson(@Nullable String contentType) {
        if (contentType == null) {
            return true;
        }
        String type = contentType.toLowerCase(Locale.ROOT);
        int semicolon = type.indexOf(';');
        if (semicolon >= 0) {
            type = type.substring(0, semicolon);
        }
        type = type.strip();
        return type.equals("application/json") || type.endsWith("+json");
    }

    private static byte @Nullable [] canonicalJson(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        if (!numbersAreExact(text)) {
            return null;
        }
        try {
            return new JsonCanonicalizer(text).getEncodedUTF8();
        } catch (IOException | RuntimeException notJson) {
            return null;
        }
    }

    /**
     * Whether every number literal outside strings survives a round trip through a double. Integers up
     * to 2^53 and decimals of at most 15 significant digits always do.
     */
    static boolean numbersAreExact(String json) {
        int n = json.length();
        int i = 0;
        while (i < n) {
            char c = json.charAt(i);
            if (c == '"') {
                i++;
                while (i < n && json.charAt(i) != '"') {
                    i += json.charAt(i) == '\\' ? 2 : 1;
                }
                i++;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                int start = i;
                while (i < n && "+-.eE0123456789".indexOf(json.charAt(i)) >= 0) {
                    i++;
                }
                if (!exact(json.substring(start, i))) {
                    return false;
                }
            } else {
                i++;
            }
        }
        return true;
    }

    private static boolean exact(String literal) {
        BigDecimal decimal;
        try {
            decimal = new BigDecimal(literal);
        } catch (NumberFormatException notANumber) {
            return true; // the JSON parser will refuse it; nothing to protect
        }
        BigDecimal stripped = decimal.stripTrailingZeros();
        if (stripped.scale() <= 0) {
            return stripped.abs().compareTo(MAX_EXACT) <= 0;
        }
        if (stripped.precision() <= 15) {
            return true;
        }
        double d = decimal.doubleValue();
        return !Double.isInfinite(d) && new BigDecimal(d).compareTo(decimal) == 0;
    }
}
