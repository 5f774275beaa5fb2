package dev.exactly.idempotency.servlet;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * An RFC 9457 problem document. Build them with {@link Problems}; write them with {@link #toJson()}
 * (media type {@value #MEDIA_TYPE}).
 *
 * @param type       a stable URI naming the kind of problem ({@code about:blank} for a bare status)
 * @param title      a short, fixed summary of the type
 * @param status     the HTTP status code
 * @param detail     an explanation of this occurrence, or {@code null}
 * @param code       a stable Stripe-style machine code (e.g. {@code idempotency_key_reused}), or {@code null}
 * @param extensions further members: strings, numbers, booleans, null, lists and maps of those
 */
public record Problem(
        URI type,
        String title,
        int status,
        @Nullable String detail,
        @Nullable String code,
        Map<String, Object> extensions) {

    /** The media type of problem documents. */
    public static final String MEDIA_TYPE = "application/problem+json";

    private static final Set<String> STANDARD_MEMBERS = Set.of("type", "title", "status", "detail", "instance", "code");

    public Problem {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(title, "title");
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("status must be an HTTP status code");
        }
        Map<String, Object> copy = new LinkedHashMap<>();
        extensions.forEach((name, value) -> {
            if (STANDARD_MEMBERS.contains(name)) {
                throw new IllegalArgumentException("'" + name + "' is a standard member, not an extension");
            }
            if (!Json.writable(value)) {
                throw new IllegalArgumentException("extension '" + name + "' is not a JSON value");
            }
            copy.put(name, value);
        });
        extensions = Collections.unmodifiableMap(copy);
    }

    /** This problem with one more extension member (e.g. {@code errors}, a list of field errors). */
    public Problem with(String name, @Nullable Object value) {
        Map<String, Object> more = new LinkedHashMap<>(extensions);
        more.put(name, value);
        return new Problem(type, title, status, detail, code, more);
    }

    /** This problem with another detail. */
    public Problem withDetail(@Nullable String detail) {
        return new Problem(type, title, status, detail, code, extensions);
    }

    /** The document as UTF-8 JSON (in fact pure ASCII: every other character is escaped). */
    public byte[] toJson() {
        StringBuilder out = new StringBuilder(256);
        out.append("{\"type\":");
        Json.string(out, type.toString());
        out.append(",\"title\":");
        Json.string(out, title);
        out.append(",\"status\":").append(status);
        if (detail != null) {
            out.append(",\"detail\":");
            Json.string(out, detail);
        }
        if (code != null) {
            out.append(",\"code\":");
            Json.string(out, code);
        }
        extensions.forEach((name, value) -> {
            out.append(',');
            Json.string(out, name);
            out.append(':');
            Json.write(out, value);
        });
        out.append('}');
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }
}
