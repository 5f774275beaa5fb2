package dev.exactly.idempotency;

import dev.exactly.idempotency.internal.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
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
 * <p>Other bodies are fingerprinted by their exact bytes (algorithm id {@value #RAW_SHA256}): a body that
 * is not JSON (by RFC 8259's grammar, with an object or array at the top), one with a member name twice, one
 * with a lone surrogate, and one holding a number that an IEEE double does not stand for (RFC 8785 reads
 * numbers as doubles, so {@code 9007199254740993} and {@code 9007199254740992} would otherwise look alike
 * and a different request could be taken for a replay). The fallback can only turn an equivalent request
 * into a mismatch, never a different request into a match.
 *
 * <p>Bodies larger than {@link #maxBodyBytes()} raise {@link PayloadTooLargeException}. A body declared
 * as JSON that nests arrays and objects deeper than {@link #maxJsonDepth()} raises
 * {@link JsonTooDeepException}, whether or not it is otherwise valid JSON; the canonicaliser stops at that
 * depth, so no body can exhaust the stack. A body of no declared type that nests that deep is fingerprinted
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
    static final int MAX_EXACT_NUMBER_CHARS = JsonNumbers.MAX_CHECKED_CHARS;

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
        CanonicalJson parser = new CanonicalJson(text, maxJsonDepth);
        String canonical = parser.canonicalise();
        if (canonical != null) {
            return canonical.getBytes(StandardCharsets.UTF_8); // a lone surrogate never gets here
        }
        if (declaredJson && (parser.tooDeep() || nestsDeeperThan(text, maxJsonDepth))) {
            throw new JsonTooDeepException(maxJsonDepth);
        }
        return null; // not JSON, or nothing RFC 8785 can stand for: hashed as it is
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
        for (String parameter : contentType.split(";", -1)) {
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
     * Whether {@code [} and <code>{</code> outside strings nest deeper than {@code maxDepth}, counted in one pass
     * over text that need not be JSON. Nothing here recurses.
     */
    static boolean nestsDeeperThan(String json, int maxDepth) {
        int n = json.length();
        int depth = 0;
        int i = 0;
        while (i < n) {
            char c = json.charAt(i);
            if (c == '"') {
                i++;
                while (i < n && json.charAt(i) != '"') {
                    i += json.charAt(i) == '\\' ? 2 : 1;
                }
            } else if (c == '[' || c == '{') {
                if (++depth > maxDepth) {
                    return true;
                }
            } else if (c == ']' || c == '}') {
                depth--;
            }
            i++;
        }
        return false;
    }
}
