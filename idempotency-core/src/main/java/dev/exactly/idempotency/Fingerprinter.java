package dev.exactly.idempotency;

import dev.exactly.idempotency.internal.Hashing;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.erdtman.jcs.JsonCanonicalizer;
import org.jspecify.annotations.Nullable;

/**
 * Computes request fingerprints: SHA-256 over the method, the route template and the body.
 *
 * <p>A JSON body is first canonicalised by RFC 8785 (JSON Canonicalization Scheme), so key order,
 * whitespace and number spelling ({@code 1.0} vs {@code 1}) do not matter while any change of a value
 * does. Algorithm id {@value #JCS_SHA256}. A body that already is its own canonical form (compact ASCII,
 * members in order, integers, strings without escapes: what a client that sorts its members sends) is
 * recognised by one scan over its bytes and hashed as it is.
 *
 * <p>Two cases fall back to hashing the exact body bytes (algorithm id {@value #RAW_SHA256}): a body
 * that is not JSON, and a JSON body holding a number that an IEEE double cannot represent exactly
 * (RFC 8785 reads numbers as doubles, so {@code 9007199254740993} and {@code 9007199254740992} would
 * otherwise look alike and a different request could be taken for a replay). The fallback can only
 * turn an equivalent request into a mismatch, never a different request into a match.
 *
 * <p>Bodies larger than {@link #maxBodyBytes()} raise {@link PayloadTooLargeException}. A body declared
 * as JSON that nests arrays and objects deeper than {@link #maxJsonDepth()} raises
 * {@link JsonTooDeepException}: the depth is counted by a linear scan before the (recursive) canonicaliser
 * runs, so no body can exhaust the stack. A body of no declared type that nests that deep is fingerprinted
 * by its bytes instead. Number literals longer than {@value #MAX_EXACT_NUMBER_CHARS} characters are not
 * parsed at all: they switch to the exact-bytes fingerprint.
 */
public final class Fingerprinter {
    /** Algorithm id of the RFC 8785 canonical JSON fingerprint. */
    public static final String JCS_SHA256 = "sha256-jcs";
    /** Algorithm id of the exact-bytes fingerprint. */
    public static final String RAW_SHA256 = "sha256-raw";
    /** Default cap on a fingerprinted body: 1 MiB. */
    public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;
    /** Default cap on JSON nesting (arrays and objects): 64 levels. */
    public static final int DEFAULT_MAX_JSON_DEPTH = 64;
    /** Longest number literal whose exactness is checked; longer ones are fingerprinted by bytes. */
    static final int MAX_EXACT_NUMBER_CHARS = 64;

    private static final BigDecimal MAX_EXACT = BigDecimal.valueOf(1L << 53);

    private final int maxBodyBytes;
    private final int maxJsonDepth;

    private Fingerprinter(int maxBodyBytes, int maxJsonDepth) {
        if (maxBodyBytes <= 0) {
            throw new IllegalArgumentException("maxBodyBytes must be positive");
        }
        if (maxJsonDepth < 1 || maxJsonDepth > 1000) {
            throw new IllegalArgumentException("maxJsonDepth must be between 1 and 1000");
        }
        this.maxBodyBytes = maxBodyBytes;
        this.maxJsonDepth = maxJsonDepth;
    }

    /** 1 MiB bodies, 64 levels of JSON nesting. */
    public static Fingerprinter ofDefaults() {
        return new Fingerprinter(DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_JSON_DEPTH);
    }

    public static Fingerprinter withMaxBodyBytes(int maxBodyBytes) {
        return new Fingerprinter(maxBodyBytes, DEFAULT_MAX_JSON_DEPTH);
    }

    /** A fingerprinter with both limits set. */
    public static Fingerprinter of(int maxBodyBytes, int maxJsonDepth) {
        return new Fingerprinter(maxBodyBytes, maxJsonDepth);
    }

    public int maxBodyBytes() {
        return maxBodyBytes;
    }

    /** The deepest JSON nesting accepted in a body declared as JSON. */
    public int maxJsonDepth() {
        return maxJsonDepth;
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
     * @throws PayloadTooLargeException the body exceeds {@link #maxBodyBytes()}
     * @throws JsonTooDeepException     the body is declared JSON and nests deeper than {@link #maxJsonDepth()}
     */
    public Fingerprint fingerprint(String method, String route, byte[] body, @Nullable String contentType) {
        checkLength(body.length);
        byte[] canonical = null;
        if (body.length > 0 && contentType == null) {
            canonical = canonicalJson(body, null, false);
        } else if (body.length > 0 && isJson(contentType)) {
            canonical = canonicalJson(body, contentType, true);
        }
        String digest = Hashing.sha256Hex(method.toUpperCase(Locale.ROOT), route, canonical != null ? canonical : body);
        return new Fingerprint(canonical != null ? JCS_SHA256 : RAW_SHA256, digest);
    }

    /** Whether a media type is JSON ({@code application/json} or {@code +json}), parameters ignored. */
    public static boolean isJson(@Nullable String contentType) {
        if (contentType == null) {
            return false;
        }
        String type = contentType.toLowerCase(Locale.ROOT);
        int semicolon = type.indexOf(';');
        if (semicolon >= 0) {
            type = type.substring(0, semicolon);
        }
        type = type.strip();
        return type.equals("application/json") || type.endsWith("+json");
    }

    private byte @Nullable [] canonicalJson(byte[] body, @Nullable String contentType, boolean declaredJson) {
        if (CanonicalJson.alreadyCanonical(body, maxJsonDepth)) {
            return body; // compact, sorted ASCII: the canonical bytes are the body's own
        }
        String text = text(body, contentType);
        if (text == null) {
            return null; // bytes that are not text in their charset: hashed as they are
        }
        CanonicalJson ordinary = new CanonicalJson(text, maxJsonDepth);
        String fast = ordinary.canonicalise();
        if (fast != null) {
            return utf8(fast);
        }
        if (ordinary.tooDeep()) {
            if (declaredJson) {
                throw new JsonTooDeepException(maxJsonDepth);
            }
            return null;
        }
        Scan scan = scan(text, maxJsonDepth);
        if (scan == Scan.TOO_DEEP) {
            if (declaredJson) {
                throw new JsonTooDeepException(maxJsonDepth);
            }
            return null;
        }
        if (scan == Scan.INEXACT_NUMBER) {
            return null;
        }
        try {
            return utf8(new JsonCanonicalizer(text).getEncodedString());
        } catch (IOException | RuntimeException notJson) {
            return null;
        }
    }

    /**
     * The body as text in its declared charset (UTF-8 when none is declared), decoded strictly: {@code null} for
     * bytes that are not text in it, or an unknown charset. A lenient decoding turned every invalid sequence
     * into U+FFFD, so that two different bodies ({@code "José"} and {@code "Josè"} sent as ISO-8859-1 under a
     * UTF-8 reading) had one fingerprint.
     */
    static @Nullable String text(byte[] body, @Nullable String contentType) {
        java.nio.charset.Charset charset = StandardCharsets.UTF_8;
        String declared = charsetParameter(contentType);
        if (declared != null) {
            try {
                charset = java.nio.charset.Charset.forName(declared);
            } catch (IllegalArgumentException unknown) {
                return null;
            }
        }
        if (charset.equals(StandardCharsets.UTF_8)) {
            // the JDK's decoding is the fast one; it replaces only malformed input, so a text without U+FFFD
            // was valid UTF-8, and only one with it (sent, or a replacement) is decoded again strictly
            String text = new String(body, StandardCharsets.UTF_8);
            if (text.indexOf('\uFFFD') < 0) {
                return text;
            }
        }
        try {
            return charset.newDecoder()
                    .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(body))
                    .toString();
        } catch (java.nio.charset.CharacterCodingException notText) {
            return null;
        }
    }

    private static @Nullable String charsetParameter(@Nullable String contentType) {
        if (contentType == null) {
            return null;
        }
        for (String parameter : contentType.split(";")) {
            int equals = parameter.indexOf('=');
            if (equals > 0 && parameter.substring(0, equals).strip().equalsIgnoreCase("charset")) {
                String value = parameter.substring(equals + 1).strip();
                if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                    value = value.substring(1, value.length() - 1);
                }
                return value.isEmpty() ? null : value;
            }
        }
        return null;
    }

    /**
     * The canonical text as UTF-8, or {@code null} (the body is then hashed as its bytes) when it holds a lone
     * surrogate ({@code "\\ud800"} in the JSON): UTF-8 has no encoding for one, and every one became the same
     * {@code ?}, so that {@code "\\ud800"} and {@code "\\udbff"} had one fingerprint.
     */
    private static byte @Nullable [] utf8(String canonical) {
        for (int i = 0; i < canonical.length(); i++) {
            char c = canonical.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < canonical.length() && Character.isLowSurrogate(canonical.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return null;
            }
        }
        return canonical.getBytes(StandardCharsets.UTF_8);
    }

    /** What the linear pre-scan found. */
    enum Scan {
        /** Nesting within the limit, every number exact as a double: safe to canonicalise. */
        CANONICALISABLE,
        /** A number a double cannot hold exactly (or too long to check): fingerprint the bytes. */
        INEXACT_NUMBER,
        /** Arrays and objects nest deeper than the limit. */
        TOO_DEEP
    }

    /**
     * One pass over the text, outside strings: the nesting depth of {@code [} and <code>{</code>, and
     * whether every number literal survives a round trip through a double (integers up to 2^53 and
     * decimals of at most 15 significant digits always do). Nothing here recurses.
     */
    static Scan scan(String json, int maxDepth) {
        int n = json.length();
        int depth = 0;
        boolean exact = true;
        int i = 0;
        while (i < n) {
            char c = json.charAt(i);
            if (c == '"') {
                i++;
                while (i < n && json.charAt(i) != '"') {
                    i += json.charAt(i) == '\\' ? 2 : 1;
                }
                i++;
            } else if (c == '[' || c == '{') {
                if (++depth > maxDepth) {
                    return Scan.TOO_DEEP;
                }
                i++;
            } else if (c == ']' || c == '}') {
                depth--;
                i++;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                int start = i;
                while (i < n && "+-.eE0123456789".indexOf(json.charAt(i)) >= 0) {
                    i++;
                }
                if (exact && !shortInteger(json, start, i)
                        && (i - start > MAX_EXACT_NUMBER_CHARS || !exact(json.substring(start, i)))) {
                    exact = false;
                }
            } else {
                i++;
            }
        }
        return exact ? Scan.CANONICALISABLE : Scan.INEXACT_NUMBER;
    }

    /** Whether every number literal outside strings survives a round trip through a double. */
    static boolean numbersAreExact(String json) {
        return scan(json, Integer.MAX_VALUE) == Scan.CANONICALISABLE;
    }

    /** An integer literal of at most 15 digits (a double holds it exactly): no need to parse it. */
    private static boolean shortInteger(String json, int start, int end) {
        int digits = start < end && json.charAt(start) == '-' ? start + 1 : start;
        if (end - digits < 1 || end - digits > 15) {
            return false;
        }
        for (int k = digits; k < end; k++) {
            char d = json.charAt(k);
            if (d < '0' || d > '9') {
                return false;
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
