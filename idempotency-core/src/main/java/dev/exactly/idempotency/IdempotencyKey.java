package dev.exactly.idempotency;

import dev.exactly.idempotency.InvalidIdempotencyKeyException.Reason;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A client-supplied idempotency key: 1 to {@value #MAX_LENGTH} printable ASCII characters.
 *
 * <p>{@link #parse(String)} accepts both spellings a client may send: the IETF structured-field string
 * ({@code "abc"}, quoted, with {@code \"} and {@code \\} escapes) and the bare form ({@code abc}, as
 * Stripe's SDKs send it). Both name the same key. Anything else is an {@link InvalidIdempotencyKeyException}.
 *
 * <p>A comma outside a quoted key separates list members (RFC 9110, section 5.3): an intermediary may join a
 * header sent twice into one line, {@code k1, k1}, and that line must name the key the two lines named
 * ({@code k1}), or a retry that passed such an intermediary would run as a new key. Members that name
 * different keys ({@code k1, k2}) are refused as several keys, as two lines naming them are; empty members
 * are ignored. A key that contains a comma is sent quoted ({@code "a,b"}).
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
        if (trimmed.indexOf(',') < 0) {
            return member(trimmed);
        }
        IdempotencyKey key = null;
        for (String member : members(trimmed)) {
            String one = stripOws(member);
            if (one.isEmpty()) {
                continue;
            }
            IdempotencyKey parsed = member(one);
            if (key == null) {
                key = parsed;
            } else if (!key.equals(parsed)) {
                throw new InvalidIdempotencyKeyException(
                        Reason.AMBIGUOUS, "the request carries several different idempotency keys");
            }
        }
        if (key == null) {
            throw new InvalidIdempotencyKeyException(Reason.EMPTY, "the idempotency key is empty");
        }
        return key;
    }

    /** One key, quoted or bare, without surrounding whitespace. */
    private static IdempotencyKey member(String trimmed) {
        if (trimmed.length() >= 1 && trimmed.charAt(0) == '"') {
            return new IdempotencyKey(unquote(trimmed));
        }
        return new IdempotencyKey(trimmed);
    }

    /** The header's list members: split at each comma that is not inside a quoted key. */
    private static List<String> members(String header) {
        List<String> members = new ArrayList<>(2);
        int start = 0;
        boolean quoted = false;
        for (int i = 0; i < header.length(); i++) {
            char c = header.charAt(i);
            if (quoted) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    quoted = false;
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                members.add(header.substring(start, i));
                start = i + 1;
            }
        }
        members.add(header.substring(start));
        return members;
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
