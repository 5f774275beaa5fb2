package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.IdempotencyPolicy;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One guarded route: an HTTP method and a path template, with its key requirement, its
 * {@link IdempotencyPolicy} and whether server errors are recorded.
 *
 * <p>A path template is context-relative and made of {@code /}-separated segments, each either literal
 * ({@code charges}) or a variable ({@code {id}}) that matches exactly one non-empty segment:
 * {@code /v1/charges}, {@code /v1/charges/{id}/refunds}. The template (not the concrete path) is part of
 * the key's scope; the concrete path is part of the request fingerprint, so the same key sent to
 * {@code /v1/charges/ch_1/refunds} and then to {@code /v1/charges/ch_2/refunds} is a payload mismatch,
 * never a replay of the other charge's refund.
 *
 * @param method             the HTTP method, upper case (e.g. {@code POST})
 * @param pathTemplate       the path template
 * @param keyRequired        whether a request without a key is refused (400); when false such a
 *                           request passes through unguarded
 * @param policy             lease, retention and in-flight behaviour
 * @param recordServerErrors whether a 5xx response is recorded as a replayed failure (Stripe's
 *                           behaviour) instead of releasing the key so that a retry runs again
 */
public record IdempotentRoute(
        String method, String pathTemplate, boolean keyRequired, IdempotencyPolicy policy, boolean recordServerErrors) {

    private static final Pattern METHOD = Pattern.compile("[A-Z][A-Z0-9_-]*");
    private static final Pattern LITERAL = Pattern.compile("[^/{}]+");
    private static final Pattern VARIABLE = Pattern.compile("\\{[A-Za-z_][A-Za-z0-9_.-]*}");

    public IdempotentRoute {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(pathTemplate, "pathTemplate");
        Objects.requireNonNull(policy, "policy");
        if (!METHOD.matcher(method).matches()) {
            throw new IllegalArgumentException("method must be an upper-case HTTP method token: " + method);
        }
        validateTemplate(pathTemplate);
    }

    /** A {@code POST} route with a required key and the default policy. */
    public static IdempotentRoute post(String pathTemplate) {
        return builder("POST", pathTemplate).build();
    }

    /** A route with a required key, the default policy and server errors released. */
    public static IdempotentRoute of(String method, String pathTemplate) {
        return builder(method, pathTemplate).build();
    }

    public static Builder builder(String method, String pathTemplate) {
        return new Builder(method, pathTemplate);
    }

    /** A builder holding this route's settings. */
    public static Builder from(IdempotentRoute base) {
        return new Builder(base.method, base.pathTemplate)
                .keyRequired(base.keyRequired)
                .policy(base.policy)
                .recordServerErrors(base.recordServerErrors);
    }

    static String[] segments(String path) {
        String trimmed = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        return trimmed.equals("/") ? new String[0] : trimmed.substring(1).split("/", -1);
    }

    static boolean isVariable(String segment) {
        return segment.startsWith("{");
    }

    private static void validateTemplate(String template) {
        if (!template.startsWith("/")) {
            throw new IllegalArgumentException("a path template starts with '/': " + template);
        }
        for (String segment : segments(template)) {
            if (!LITERAL.matcher(segment).matches()
                    && !VARIABLE.matcher(segment).matches()) {
                throw new IllegalArgumentException(
                        "a path template segment is a literal or a {variable}: '" + segment + "' in " + template);
            }
        }
    }

    /** Validating builder; defaults: key required, {@link IdempotencyPolicy#ofDefaults()}, 5xx released. */
    public static final class Builder {
        private final String method;
        private final String pathTemplate;
        private boolean keyRequired = true;
        private IdempotencyPolicy policy = IdempotencyPolicy.ofDefaults();
        private boolean recordServerErrors;

        private Builder(String method, String pathTemplate) {
            this.method = method;
            this.pathTemplate = pathTemplate;
        }

        /** Whether a request without a key is refused with 400 (true, the default) or passes unguarded. */
        public Builder keyRequired(boolean keyRequired) {
            this.keyRequired = keyRequired;
            return this;
        }

        public Builder policy(IdempotencyPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** Record 5xx responses as replayed failures instead of releasing the key (default: false). */
        public Builder recordServerErrors(boolean recordServerErrors) {
            this.recordServerErrors = recordServerErrors;
            return this;
        }

        public IdempotentRoute build() {
            return new IdempotentRoute(method, pathTemplate, keyRequired, policy, recordServerErrors);
        }
    }
}
