package dev.exactly.idempotency.client;

import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * One logical request, as it goes out on every attempt: method, target, headers and the exact body
 * bytes. The {@code Idempotency-Key} header is not part of it: the client adds the key it was given.
 * Immutable.
 *
 * <p>A request may name several equivalent targets (instances of one service without a load balancer in
 * front): attempt {@code n} goes to target {@code (n - 1) mod size}, so a retry goes to the next one.
 */
public final class IdempotentRequest {
    /** Headers that carry credentials: never written to a journal, supplied again when resuming. */
    public static final Set<String> CREDENTIAL_HEADERS = Set.of("authorization", "proxy-authorization", "cookie");

    private static final Set<String> RESTRICTED = Set.of(
            "idempotency-key",
            "x-idempotency-key",
            "content-length",
            "host",
            "connection",
            "expect",
            "upgrade",
            "transfer-encoding");

    private final String method;
    private final List<URI> targets;
    private final Map<String, List<String>> headers;
    private final byte[] body;

    private IdempotentRequest(String method, List<URI> targets, Map<String, List<String>> headers, byte[] body) {
        this.method = method;
        this.targets = targets;
        this.headers = headers;
        this.body = body;
    }

    /** A {@code POST} of {@code body} with {@code Content-Type: application/json}. */
    public static IdempotentRequest postJson(URI target, byte[] body) {
        return builder("POST", target)
                .header("Content-Type", "application/json")
                .body(body)
                .build();
    }

    /** A builder for {@code method} to {@code target}. */
    public static Builder builder(String method, URI target) {
        return new Builder(method, target);
    }

    /** A builder that starts as a copy of this request. */
    public Builder toBuilder() {
        Builder b = new Builder(method, targets.getFirst());
        b.targets.clear();
        b.targets.addAll(targets);
        headers.forEach((name, values) -> b.headers.put(name, new ArrayList<>(values)));
        b.body = body;
        return b;
    }

    /** Upper case: {@code POST}, {@code PUT}, ... */
    public String method() {
        return method;
    }

    /** The first target. */
    public URI uri() {
        return targets.getFirst();
    }

    /** Every target, tried in turn, one attempt each. */
    public List<URI> targets() {
        return targets;
    }

    /** The target of attempt {@code attempt} (from 1). */
    public URI target(int attempt) {
        return targets.get(Math.floorMod(attempt - 1, targets.size()));
    }

    /** Header names (lower case) to values, sorted by name. */
    public Map<String, List<String>> headers() {
        return headers;
    }

    /** A copy of the body bytes. */
    public byte[] body() {
        return body.clone();
    }

    /** The body's length in bytes. */
    public int bodyLength() {
        return body.length;
    }

    /** This request without its {@linkplain #CREDENTIAL_HEADERS credential headers}: what a journal keeps. */
    public IdempotentRequest withoutCredentials() {
        Map<String, List<String>> kept = new TreeMap<>(headers);
        kept.keySet().removeAll(CREDENTIAL_HEADERS);
        return kept.size() == headers.size()
                ? this
                : new IdempotentRequest(method, targets, Collections.unmodifiableMap(kept), body);
    }

    /** Whether {@code other} sends the same method, targets and body bytes (headers aside). */
    public boolean sameRequestAs(IdempotentRequest other) {
        return method.equals(other.method) && targets.equals(other.targets) && Arrays.equals(body, other.body);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IdempotentRequest r && sameRequestAs(r) && headers.equals(r.headers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(method, targets, headers, Arrays.hashCode(body));
    }

    @Override
    public String toString() {
        return method + " " + targets.getFirst() + (targets.size() > 1 ? " (+" + (targets.size() - 1) + " more)" : "")
                + ", " + body.length + " bytes";
    }

    /** Builds a request; {@link #build()} validates it. */
    public static final class Builder {
        private final String method;
        private final List<URI> targets = new ArrayList<>();
        private final Map<String, List<String>> headers = new TreeMap<>();
        private byte[] body = new byte[0];

        private Builder(String method, URI target) {
            Objects.requireNonNull(method, "method");
            if (!method.matches("[A-Za-z]{1,20}")) {
                throw new IllegalArgumentException("not an HTTP method: " + method);
            }
            this.method = method.toUpperCase(Locale.ROOT);
            targets.add(checkTarget(target));
        }

        /** More equivalent targets; retries go to each in turn. */
        public Builder alsoTo(URI target) {
            targets.add(checkTarget(target));
            return this;
        }

        /** Adds a header value. {@code Idempotency-Key} is refused: the client sets the key. */
        public Builder header(String name, String value) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
            String lower = name.strip().toLowerCase(Locale.ROOT);
            if (!lower.matches("[!#$%&'*+.^_`|~0-9a-z-]+")) {
                throw new IllegalArgumentException("not a header name: " + name);
            }
            if (RESTRICTED.contains(lower)) {
                throw new IllegalArgumentException(name + " is set by the client, not by the request");
            }
            if (value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("header values must not contain line breaks: " + name);
            }
            headers.computeIfAbsent(lower, k -> new ArrayList<>()).add(value);
            return this;
        }

        /** The body; the bytes are copied, and the copy goes out on every attempt. */
        public Builder body(byte[] body) {
            this.body = Objects.requireNonNull(body, "body").clone();
            return this;
        }

        public IdempotentRequest build() {
            Map<String, List<String>> frozen = new TreeMap<>();
            headers.forEach((name, values) -> frozen.put(name, List.copyOf(values)));
            return new IdempotentRequest(
                    method, List.copyOf(targets), Collections.unmodifiableMap(frozen), body.clone());
        }

        private static URI checkTarget(URI target) {
            Objects.requireNonNull(target, "target");
            String scheme = target.getScheme();
            if ((!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme)) || target.getHost() == null) {
                throw new IllegalArgumentException("target must be an absolute http or https URI: " + target);
            }
            return target;
        }
    }
}
