package dev.exactly.idempotency.client;

import java.net.URI;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * The final answer to one logical request.
 *
 * @param status   the HTTP status
 * @param headers  the answer's headers
 * @param body     the answer's bytes (the accessor returns a copy)
 * @param key      the idempotency key every attempt carried
 * @param attempts how many attempts it took (1 when the first answer was final)
 * @param replayed whether the server replayed an earlier answer ({@code Idempotent-Replayed: true}, or
 *                 the seed's {@code X-Idempotent-Replay: true}): the action ran before, on an earlier
 *                 attempt or by another sender of this key
 * @param uri      the target that gave the answer
 */
public record IdempotentResponse(
        int status, HttpHeaders headers, byte[] body, String key, int attempts, boolean replayed, URI uri) {

    /** The header by which a server marks a replayed answer (Stripe's). */
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";
    /** The same mark under the name some servers use. */
    public static final String REPLAY_HEADER_ALIAS = "X-Idempotent-Replay";

    public IdempotentResponse {
        Objects.requireNonNull(headers, "headers");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(uri, "uri");
        body = Objects.requireNonNull(body, "body").clone();
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts must be positive");
        }
    }

    /** Whether {@code headers} mark a replay: {@code Idempotent-Replayed: true} or {@code X-Idempotent-Replay: true}. */
    public static boolean isReplay(HttpHeaders headers) {
        return isTrue(headers, REPLAYED_HEADER) || isTrue(headers, REPLAY_HEADER_ALIAS);
    }

    private static boolean isTrue(HttpHeaders headers, String name) {
        return headers.firstValue(name)
                .map(v -> v.strip().equalsIgnoreCase("true"))
                .orElse(false);
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    /** The body decoded as UTF-8. */
    public String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** Whether the status is 2xx. */
    public boolean successful() {
        return status >= 200 && status < 300;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IdempotentResponse r
                && status == r.status
                && attempts == r.attempts
                && replayed == r.replayed
                && key.equals(r.key)
                && uri.equals(r.uri)
                && headers.equals(r.headers)
                && Arrays.equals(body, r.body);
    }

    @Override
    public int hashCode() {
        return Objects.hash(status, headers, Arrays.hashCode(body), key, attempts, replayed, uri);
    }

    @Override
    public String toString() {
        return "IdempotentResponse[status=" + status + ", key=" + key + ", attempts=" + attempts + ", replayed="
                + replayed + ", uri=" + uri + ", " + body.length + " bytes]";
    }
}
