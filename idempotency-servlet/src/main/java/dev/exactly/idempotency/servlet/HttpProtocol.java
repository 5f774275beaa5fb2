package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.IdempotencyException;
import dev.exactly.idempotency.InvalidIdempotencyKeyException;
import dev.exactly.idempotency.LeaseLostException;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.RequestInFlightException;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP rules of idempotency keys that do not depend on a web framework, shared by every HTTP adapter
 * (the servlet {@link IdempotencyFilter}, the WebFlux filter of {@code idempotency-webflux}), so that they
 * answer alike: which response is recorded, released or replayed ({@link #outcome}), what a response too
 * large to store is replayed as, which problem and {@code Retry-After} an engine exception gets, how a
 * trusted header or an API key names a tenant, the headers and defaults both use. None of it touches the
 * Servlet API (nor may it: the WebFlux filter loads it without one).
 */
public final class HttpProtocol {
    /** The request header naming the key. */
    public static final String KEY_HEADER = "Idempotency-Key";
    /** An alias of {@link #KEY_HEADER}; if both are sent they must name the same key. */
    public static final String KEY_ALIAS_HEADER = "X-Idempotency-Key";
    /** Marks a replayed response ({@code true}), as Stripe does. */
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";
    /** Marks a replayed response ({@code true}); the spelling of the original requirement. */
    public static final String LEGACY_REPLAYED_HEADER = "X-Idempotent-Replay";
    /** When the key's record is forgotten: an IMF-fixdate. An Exactly extension. */
    public static final String EXPIRES_HEADER = "Idempotency-Expires";
    /** Default limit of a stored (replayable) response body: 1 MiB. */
    public static final int DEFAULT_MAX_STORED_RESPONSE_BYTES = 1 << 20;
    /** Default {@code Retry-After} of a 503 for an unavailable store: 2 seconds. */
    public static final Duration DEFAULT_STORE_UNAVAILABLE_RETRY_AFTER = Duration.ofSeconds(2);
    /** Default {@code WWW-Authenticate} challenge of a 401. */
    public static final String DEFAULT_CHALLENGE = "Bearer";

    /*
     * The attributes a handler reads or sets, one name for both web stacks (the servlet filter's request
     * attributes are the WebFlux filter's exchange attributes), so that code that reads the lease or marks a
     * response works under either filter. Literals: the WebFlux filter loads them without the Servlet API.
     */
    /** The running lease, while the handler runs. */
    public static final String LEASE_ATTRIBUTE = "dev.exactly.idempotency.servlet.IdempotencyFilter.LEASE";
    /** Set (to any value) by a handler: its response is not recorded and the key released. */
    public static final String DO_NOT_RECORD_ATTRIBUTE =
            "dev.exactly.idempotency.servlet.IdempotencyFilter.DO_NOT_RECORD";
    /** {@code Boolean.TRUE} on a request the handler gets without the guard (the store was unavailable). */
    public static final String UNGUARDED_ATTRIBUTE = "dev.exactly.idempotency.servlet.IdempotencyFilter.UNGUARDED";
    /** {@code Retry-After} of a lost lease: the client retries with the same key, soon. */
    public static final Duration LEASE_LOST_RETRY_AFTER = Duration.ofSeconds(1);

    private HttpProtocol() {}

    /**
     * What a handler's response does to its key: completed, failed (both replayed) or released. The rule is
     * {@link RecordingRule}'s.
     *
     * @param doNotRecord the application marked the response as not to be recorded
     * @param stored      the response as it would be stored
     */
    public static Outcome outcome(
            IdempotentRoute route,
            int status,
            @Nullable String contentType,
            byte @Nullable [] body,
            boolean doNotRecord,
            StoredResponse stored) {
        return RecordingRule.outcome(route, status, contentType, body, doNotRecord, stored);
    }

    /** Whether a response with this status releases its key whatever its body (401, 403, 406, 408, 415, 429, 5xx). */
    public static boolean releasedByStatus(IdempotentRoute route, int status) {
        return RecordingRule.releasedByStatus(route, status);
    }

    /**
     * What is stored for a response whose body outgrew the storage limit: the original status, where to look
     * (Location, Link) but not what described the body, and a {@code response-not-stored} problem.
     */
    public static StoredResponse notStored(
            int status, Map<String, List<String>> storedHeaders, long bodyBytes, int limitBytes) {
        Map<String, List<String>> kept = new LinkedHashMap<>(storedHeaders);
        kept.keySet()
                .removeAll(Set.of(
                        "content-type",
                        "content-encoding",
                        "content-language",
                        "content-disposition",
                        "etag",
                        "content-location"));
        kept.put("content-type", List.of(Problem.MEDIA_TYPE));
        return new StoredResponse(
                status,
                kept,
                Problems.responseNotStored(status, bodyBytes, limitBytes).toJson());
    }

    /** The problem for an engine exception; a missing key names {@code keyHeader}. */
    public static Problem problem(IdempotencyException e, String keyHeader) {
        return e instanceof InvalidIdempotencyKeyException invalid
                        && invalid.reason() == InvalidIdempotencyKeyException.Reason.MISSING
                ? Problems.keyMissing(keyHeader)
                : Problems.from(e);
    }

    /** The {@code Retry-After} value (whole seconds, at least 1) that goes with an engine exception, if any. */
    public static Optional<String> retryAfter(IdempotencyException e, Duration storeUnavailableRetryAfter) {
        Duration after = switch (e) {
            case RequestInFlightException inFlight -> inFlight.retryAfter();
            case StoreUnavailableException unavailable -> storeUnavailableRetryAfter;
            case LeaseLostException lost -> LEASE_LOST_RETRY_AFTER;
            default -> null;
        };
        return after == null ? Optional.empty() : Optional.of(seconds(after));
    }

    /** A duration as a {@code Retry-After} value: whole seconds, rounded up, at least 1. */
    public static String seconds(Duration duration) {
        return Long.toString(Math.max(1, (duration.toMillis() + 999) / 1000));
    }

    /** Whether a request's media type is {@code multipart/*}: refused on guarded routes. */
    public static boolean isMultipart(@Nullable String contentType) {
        return contentType != null
                && contentType.strip().toLowerCase(Locale.ROOT).startsWith("multipart/");
    }

    /** The 415 of a multipart body on a guarded route. */
    public static Problem multipartRefused() {
        return Problems.unsupportedMediaType(
                "multipart request bodies are not accepted on idempotent routes; send the request as JSON");
    }

    /** An IMF-fixdate ({@code Idempotency-Expires}). */
    public static String httpDate(Instant instant) {
        return HttpDates.format(instant);
    }

    /** The response headers stored and replayed, after the credential deny-list (see {@link IdempotencyFilter.Builder#replayHeaders}). */
    public static Function<Map<String, List<String>>, Map<String, List<String>>> replayedHeaders(
            List<String> extraAllowed, List<String> credentialHeaders) {
        HeaderPolicy policy = new HeaderPolicy(extraAllowed, credentialHeaders);
        return headers -> {
            Map<String, List<String>> kept = new LinkedHashMap<>();
            headers.forEach((name, values) -> {
                if (policy.stored(name) && !values.isEmpty()) {
                    kept.put(name.toLowerCase(Locale.ROOT), List.copyOf(values));
                }
            });
            return kept;
        };
    }

    /**
     * The tenant named by a header a trusted gateway sets: exactly one value, 1-255 printable ASCII
     * characters without spaces; anything else names none ({@link TenantResolver#trustedHeader}).
     */
    public static Optional<String> trustedHeaderTenant(List<String> values) {
        if (values.size() != 1) {
            return Optional.empty();
        }
        String value = values.getFirst().strip();
        if (value.isEmpty() || value.length() > 255 || !value.chars().allMatch(c -> c >= 0x21 && c <= 0x7e)) {
            return Optional.empty();
        }
        return Optional.of(value);
    }

    /**
     * API key to tenant, from a request's {@code Authorization} values ({@link TenantResolver#apiKeys}): keys
     * held as SHA-256 digests, compared in constant time.
     */
    public static Function<List<String>, Optional<String>> apiKeyTenants(Map<String, String> keyToTenant) {
        ApiKeyTenantResolver resolver = new ApiKeyTenantResolver(keyToTenant);
        return resolver::resolve;
    }

    /**
     * Checks header names (printable ASCII, no space or colon) for a builder.
     *
     * @throws IllegalArgumentException naming the first that is not one
     */
    public static List<String> headerNames(String... names) {
        for (String name : names) {
            if (name == null || name.isBlank() || !name.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != ':')) {
                throw new IllegalArgumentException("not a header name: " + name);
            }
        }
        return List.of(names);
    }

    /**
     * The key header and its aliases, checked: each a header name, no alias repeating the header.
     *
     * @return the header first, then the aliases
     */
    public static List<String> keyHeaders(String name, String... aliases) {
        headerNames(name);
        List<String> others = headerNames(aliases);
        for (String alias : others) {
            if (alias.equalsIgnoreCase(name)) {
                throw new IllegalArgumentException("the key header's alias repeats it: " + alias);
            }
        }
        List<String> all = new java.util.ArrayList<>(List.of(name));
        all.addAll(others);
        return List.copyOf(all);
    }

    /** A route table: {@code match(method, path)}, first declared first. */
    public static RouteMatcher routes(List<IdempotentRoute> routes) {
        RouteTable table = new RouteTable(routes);
        return table::match;
    }

    /** Matches a request's method and context-relative path. */
    @FunctionalInterface
    public interface RouteMatcher {
        /** The first route matching, or {@code null}. */
        @Nullable
        IdempotentRoute match(String method, String path);
    }

    /**
     * What the fingerprint takes of the request's target: the decoded path with its {@code %} and {@code ?}
     * encoded again, then {@code ?} and the raw query if there is one. Without that, the path {@code
     * /v1/orders/o1%3Fcapture=true} (one segment, {@code o1?capture=true}) and the path {@code /v1/orders/o1}
     * with the query {@code capture=true} were the same request.
     */
    public static String fingerprintTarget(String decodedPath, @Nullable String rawQuery) {
        String path = decodedPath.indexOf('%') < 0 && decodedPath.indexOf('?') < 0
                ? decodedPath
                : decodedPath.replace("%", "%25").replace("?", "%3F");
        return rawQuery == null ? path : path + "?" + rawQuery;
    }

    /**
     * With {@link StoreUnavailablePolicy#PASS_THROUGH}: after the store failed before a handler, requests on
     * guarded routes pass without trying it until the store-unavailable {@code Retry-After} has passed, so that
     * a stalled store does not hold each of them for its timeout; then the next request tries it again.
     */
    public static final class StoreBypass {
        private final StoreUnavailablePolicy policy;
        private final long windowNanos;
        private final java.util.concurrent.atomic.AtomicLong until = new java.util.concurrent.atomic.AtomicLong();
        private volatile boolean open;

        public StoreBypass(StoreUnavailablePolicy policy, Duration window) {
            this.policy = policy;
            this.windowNanos = Math.max(1, window.toNanos());
        }

        /** Whether requests pass through now, without trying the store. */
        public boolean active() {
            return open && System.nanoTime() - until.get() < 0;
        }

        /**
         * The store failed before the handler was called: whether the request passes through (then the
         * window starts now), or is refused ({@link StoreUnavailablePolicy#REFUSE}).
         */
        public boolean passesAfterFailure() {
            if (policy != StoreUnavailablePolicy.PASS_THROUGH) {
                return false;
            }
            until.set(System.nanoTime() + windowNanos);
            open = true;
            return true;
        }
    }
}
