package dev.exactly.idempotency;

import dev.exactly.idempotency.InvalidIdempotencyKeyException.Reason;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A client-supplied idempotency key: 1 to {@value #MAX_LENGTH} printable ASCII characters.
 *
 * <p>{@link #parse(String)} accepts both spellings a client may send: the IETF structured-field string
 * ({@code "abc"}, quoted, with {@code \"} and {@code \\} escapes) and the bare form ({@code abc}, as
 * Stripe's SDKs send it). Both name the same key. Anything else is an {@link InvalidIdempotencyKeyException}.
 *
 * @param value the unquoted key
 */
public record IdempotencyKey(String value) {

    /** The longest key accepted, in characters. */
    public static final int MAX_LENGTH = 255;

    public IdempotencyKey {
        validate(value);
    }

    /**
     * Parses one header value.
     *
     * @param header the raw header value, or {@code null} when the header is absent
     * @throws InvalidIdempotencyKeyException when absent, empty, too long, or not printable ASCII
     */
    public static IdempotencyKey parse(@Nullable String header) {
        if (header == null) {
            throw new InvalidIdempotencyKeyException(Reason.MISSING, "the Idempotency-Key header is required");
        }
        String trimmed = stripOws(header);
        if (trimmed.length() >= 1 && trimmed.charAt(0) == '"') {
            return new IdempotencyKey(unquote(trimmed));
        }
        return new IdempotencyKey(trimmed);
    }

    /**
     * Parses every value a request carried for the key header (a header may be repeated, and an alias
     * may be used too). All values must name the same key.
     */
    public static IdempotencyKey parse(List<String> headerValues) {
        if (headerValues.isEmpty()) {
            return parse((String) null);
        }
        IdempotencyKey first = parse(headerValues.getFirst());
        for (int i = 1; i < headerValues.size(); i++) {
            if (!first.equals(parse(headerValues.get(i)))) {
                throw new InvalidIdempotencyKeyException(
                        Reason.AMBIGUOUS, "the request carries several different idempotency keys");
            }
        }
        return first;
    }

    private static String stripOws(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && isOws(s.charAt(start))) {
            start++;
        }
        while (end > start && isOws(s.charAt(end - 1))) {
            end--;
        }
        return s.substring(start, end);
    }

    private static boolean isOws(char c) {
        return c == ' ' || c == '\t';
    }

    /** RFC 9651 sf-string: DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE. */
    private static String unquote(String quoted) {
        StringBuilder out = new StringBuilder(quoted.length());
        int i = 1;
        while (i < quoted.length()) {
            char c = quoted.charAt(i);
            if (c == '\\') {
                if (i + 1 >= quoted.length()) {
                    break;
                }
                char next = quoted.charAt(i + 1);
                if (next != '"' && next != '\\') {
                    throw illegal("a quoted key may only escape '\"' and '\\'");
                }
                out.append(next);
                i += 2;
            } else if (c == '"') {
                if (i != quoted.length() - 1) {
                    throw illegal("text after the closing quote of the key");
                }
                return out.toString();
            } else if (c < 0x20 || c > 0x7e) {
                throw illegal("the key must be printable ASCII");
            } else {
                out.append(c);
                i++;
            }
        }
        throw illegal("the quoted key has no closing quote");
    }

    private static void validate(String value) {
        if (value.isEmpty()) {
            throw new InvalidIdempotencyKeyException(Reason.EMPTY, "the idempotency key is empty");
        }
        if (value.length() > MAX_LENGTH) {
            throw new InvalidIdempotencyKeyException(
                    Reason.TOO_LONG, "the idempotency key is longer than " + MAX_LENGTH + " characters");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                throw illegal("the idempotency key must be printable ASCII (0x20-0x7E)");
            }
        }
    }

    private static InvalidIdempotencyKeyException illegal(String message) {
        return new InvalidIdempotencyKeyException(Reason.ILLEGAL_CHARACTER, message);
    }

    @Override
    public String toString() {
        // Keys may be guessable business identifiers; keep them out of logs by default.
        return "IdempotencyKey[" + value.length() + " chars]";
    }
}
