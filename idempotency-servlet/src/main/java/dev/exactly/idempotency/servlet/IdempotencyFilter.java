package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.GuardedAction;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyException;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.Lease;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A Jakarta Servlet filter that makes configured routes idempotent: a request carrying an
 * {@code Idempotency-Key} (alias {@code X-Idempotency-Key}; both configurable with
 * {@link Builder#keyHeader}) runs its handler at most once per tenant,
 * method, route and key, and every retry gets the first response back, byte for byte.
 *
 * <pre>{@code
 * IdempotencyFilter filter = IdempotencyFilter.builder(engine)
 *         .route(IdempotentRoute.post("/v1/charges"))
 *         .route(IdempotentRoute.builder("POST", "/v1/charges/{id}/refunds")
 *                 .policy(IdempotencyPolicy.custom().inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(5))).build())
 *                 .build())
 *         .tenantResolver(TenantResolver.principal())
 *         .build();
 * }</pre>
 *
 * <h2>What a client sees</h2>
 * Requests that match no route pass through untouched. On a route (first match in declaration order;
 * see {@link IdempotentRoute} for templates), errors are RFC 9457 {@code application/problem+json}
 * documents built by {@link Problems}:
 * <ul>
 *   <li>401 {@code tenant-unresolved}: the {@link TenantResolver} found no tenant;</li>
 *   <li>400 {@code idempotency-key-missing} (route requires a key) or {@code idempotency-key-invalid}
 *       (empty, over 255 characters, not printable ASCII, or the two headers disagree);</li>
 *   <li>413 {@code payload-too-large}: the body exceeds the fingerprint limit (a declared
 *       {@code Content-Length} is checked before reading; a chunked body is counted as it is read);</li>
 *   <li>415 {@code unsupported-media-type}: a {@code multipart/*} body (not supported on guarded
 *       routes);</li>
 *   <li>400 {@code json-too-deep}: a body declared as JSON nests deeper than the fingerprinter's limit
 *       (64 levels by default), counted before anything parses it;</li>
 *   <li>422 {@code idempotency-key-reused}: the key was used for a different request;</li>
 *   <li>409 {@code idempotency-key-in-use} with {@code Retry-After}: the key is in flight (under a
 *       wait policy only after the bounded wait);</li>
 *   <li>409 {@code idempotency-lease-lost}: the handler ran but lost its lease (the engine's renewals
 *       stalled, the process was frozen past the lease, or the handler ran past the keep-alive's max hold)
 *       and another request took the key over; nothing was recorded;</li>
 *   <li>503 {@code idempotency-store-unavailable} with {@code Retry-After}: the store failed before the
 *       handler was called, which then was not called (fail closed; with
 *       {@link StoreUnavailablePolicy#PASS_THROUGH} the handler is called unguarded instead, for handlers
 *       that guard their effects durably themselves);</li>
 *   <li>503 {@code outcome-unknown} with {@code Retry-After}: the store failed while the handler ran.</li>
 * </ul>
 * None of these tells the client that a new key is safe. When the store fails <em>after</em> the handler
 * returned, the client gets the handler's own response (without {@code Idempotency-Expires}) and the
 * engine records it in the background with the owner token; a claim that timed out is released by its
 * token as soon as the store answers again.
 * A replay carries the recorded status, the allow-listed headers and the exact body, plus
 * {@code Idempotent-Replayed: true} and {@code X-Idempotent-Replay: true}. Executed and replayed responses
 * whose outcome is recorded carry {@code Idempotency-Expires}, an IMF-fixdate until which the key is
 * replayed (an Exactly extension; no standard defines it); a response that was not recorded, and the
 * filter's own problem responses, do not.
 *
 * <h2>What is recorded</h2>
 * 2xx/3xx are recorded as completed and 4xx as failed (both replayed); validation failures (422 of type
 * {@link Problems#VALIDATION_FAILED}), 401/403/406/408/415/429, responses marked with {@link #DO_NOT_RECORD},
 * exceptions and 5xx are released so that a retry runs again (5xx are recorded as failed on routes with
 * {@link IdempotentRoute#recordServerErrors()}). A body larger than the storage limit is streamed to the
 * first caller in full, and replayed as a {@code response-not-stored} problem with the original status
 * and headers: the request is never executed twice.
 *
 * <h2>Handlers</h2>
 * The handler sees a request whose body was read once (bounded) and is replayed from memory
 * ({@code getInputStream}, {@code getReader}, and {@code getParameter} for url-encoded forms), and a
 * response that is captured until it returns. Handlers on guarded routes must be synchronous:
 * {@code startAsync} and non-blocking IO throw {@link IllegalStateException} (the key is then released).
 * Multipart bodies are not supported there. While the handler runs, the engine keeps its lease alive
 * (renewed every third of the lease, per the route policy's {@link dev.exactly.idempotency.KeepAlive}), so
 * a slow handler keeps its key and its duplicates get 409 or wait. The running {@link Lease} is available
 * as the request attribute {@link #LEASE}: {@link Lease#isLost()} tells a handler that another request may
 * have taken its key over (stop before the next side effect), and its owner token can be passed
 * downstream as a fencing token. A failed renewal is never thrown into the handler; should the store fail
 * while the handler runs and the engine throw, the client gets 503 {@code outcome-unknown}. The
 * filter keeps no per-request state outside the request, so it is safe on virtual threads.
 *
 * <p>Instances are immutable and thread-safe. Register the filter for the {@code REQUEST} dispatch;
 * it ignores other dispatches.
 */
public final class IdempotencyFilter implements Filter {
    /** The request header naming the key. */
    public static final String KEY_HEADER = HttpProtocol.KEY_HEADER;
    /** An alias of {@link #KEY_HEADER}; if both are sent they must name the same key. */
    public static final String KEY_ALIAS_HEADER = HttpProtocol.KEY_ALIAS_HEADER;
    /** Marks a replayed response ({@code true}), as Stripe does. */
    public static final String REPLAYED_HEADER = HttpProtocol.REPLAYED_HEADER;
    /** Marks a replayed response ({@code true}); the spelling of the original requirement. */
    public static final String LEGACY_REPLAYED_HEADER = HttpProtocol.LEGACY_REPLAYED_HEADER;
    /** When the key's record is forgotten: an IMF-fixdate. An Exactly extension. */
    public static final String EXPIRES_HEADER = HttpProtocol.EXPIRES_HEADER;
    /**
     * A request attribute: when a handler sets it (to any value), its response is not recorded and the
     * key is released, so that the client may retry with the same key.
     */
    public static final String DO_NOT_RECORD = HttpProtocol.DO_NOT_RECORD_ATTRIBUTE;
    /**
     * A request attribute holding the running {@link Lease} while the handler runs: an attribute of the
     * request the handler (and every filter after this one) is given, not of the container's request.
     */
    public static final String LEASE = HttpProtocol.LEASE_ATTRIBUTE;
    /**
     * A request attribute ({@code Boolean.TRUE}) of a request on a guarded route that the handler gets
     * without the guard: the store was unavailable and the filter passes requests through
     * ({@link StoreUnavailablePolicy#PASS_THROUGH}).
     */
    public static final String UNGUARDED = HttpProtocol.UNGUARDED_ATTRIBUTE;
    /** Default limit of a stored (replayable) response body: 1 MiB. */
    public static final int DEFAULT_MAX_STORED_RESPONSE_BYTES = HttpProtocol.DEFAULT_MAX_STORED_RESPONSE_BYTES;
    /** Default {@code Retry-After} of a 503 for an unavailable store: 2 seconds. */
    public static final Duration DEFAULT_STORE_UNAVAILABLE_RETRY_AFTER =
            HttpProtocol.DEFAULT_STORE_UNAVAILABLE_RETRY_AFTER;
    /** Default {@code WWW-Authenticate} challenge of a 401. */
    public static final String DEFAULT_CHALLENGE = HttpProtocol.DEFAULT_CHALLENGE;

    private static final String APPLIED = IdempotencyFilter.class.getName() + ".APPLIED";

    private final IdempotencyEngine engine;
    private final RouteTable routes;
    private final TenantResolver tenantResolver;
    private final Fingerprinter fingerprinter;
    private final HeaderPolicy headerPolicy;
    private final int maxStoredResponseBytes;
    private final Duration storeUnavailableRetryAfter;
    private final HttpProtocol.StoreBypass bypass;
    private final String challenge;
    private final InstantSource clock;
    private final String keyHeader;
    private final List<String> keyHeaderAliases;

    private IdempotencyFilter(Builder builder) {
        this.engine = builder.engine;
        this.routes = new RouteTable(builder.routes);
        this.tenantResolver = builder.tenantResolver;
        this.fingerprinter = builder.fingerprinter;
        this.headerPolicy = new HeaderPolicy(builder.replayHeaders, builder.credentialHeaders);
        this.maxStoredResponseBytes = builder.maxStoredResponseBytes;
        this.storeUnavailableRetryAfter = builder.storeUnavailableRetryAfter;
        this.bypass = new HttpProtocol.StoreBypass(builder.storeUnavailablePolicy, builder.storeUnavailableRetryAfter);
        this.challenge = builder.challenge;
        this.clock = builder.clock;
        this.keyHeader = builder.keyHeader;
        this.keyHeaderAliases = List.copyOf(builder.keyHeaderAliases);
    }

    /** A builder; the engine (with its store and listener) is the only required part. */
    public static Builder builder(IdempotencyEngine engine) {
        return new Builder(engine);
    }

    /** The guarded routes, in matching order. */
    public List<IdempotentRoute> routes() {
        return routes.routes();
    }

    /** The fingerprinter: its limits are the 413 and {@code json-too-deep} limits. */
    public Fingerprinter fingerprinter() {
        return fingerprinter;
    }

    /** The headers stored and replayed (lower case), after the credential deny-list. */
    public Set<String> replayedHeaders() {
        return headerPolicy.allowed();
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!(req instanceof HttpServletRequest request)
                || !(res instanceof HttpServletResponse response)
                || request.getDispatcherType() != DispatcherType.REQUEST
                || request.getAttribute(APPLIED) != null) {
            chain.doFilter(req, res);
            return;
        }
        String path = path(request);
        IdempotentRoute route = routes.match(request.getMethod(), path);
        if (route == null) {
            chain.doFilter(req, res);
            return;
        }
        request.setAttribute(APPLIED, true);
        try {
            guard(request, response, chain, route, path);
        } catch (IdempotencyException e) {
            if (response.isCommitted()) {
                throw e; // the body was already streaming to the client; nothing sensible can be added
            }
            writeProblem(response, problem(e), retryAfter(e));
        }
    }

    /** The problem for an engine exception; a missing key names this filter's header. */
    private Problem problem(IdempotencyException e) {
        return HttpProtocol.problem(e, keyHeader);
    }

    /** The header naming the key ({@value #KEY_HEADER} unless configured). */
    public String keyHeader() {
        return keyHeader;
    }

    /** Other headers accepted for the key ({@value #KEY_ALIAS_HEADER} unless configured). */
    public List<String> keyHeaderAliases() {
        return keyHeaderAliases;
    }

    private void guard(
            HttpServletRequest request,
            HttpServletResponse response,
            FilterChain chain,
            IdempotentRoute route,
            String path)
            throws IOException, ServletException {
        List<String> keyHeaders = new ArrayList<>(2);
        addAll(keyHeaders, request.getHeaders(keyHeader));
        for (String alias : keyHeaderAliases) {
            addAll(keyHeaders, request.getHeaders(alias));
        }
        if (keyHeaders.isEmpty() && !route.keyRequired()) {
            chain.doFilter(request, response);
            return;
        }
        Optional<String> tenant = tenantResolver.resolve(request).filter(t -> !t.isBlank());
        if (tenant.isEmpty()) {
            writeProblem(response, Problems.tenantUnresolved(), Map.of("WWW-Authenticate", challenge));
            return;
        }
        IdempotencyKey key = IdempotencyKey.parse(keyHeaders);
        if (HttpProtocol.isMultipart(request.getContentType())) {
            writeProblem(response, HttpProtocol.multipartRefused(), Map.of());
            return;
        }
        byte[] body = CachedBodyRequest.readBounded(request, fingerprinter.maxBodyBytes());
        // a form parsed by a filter before this one is gone from the stream: its parameters are the request
        Map<String, String[]> upstream = CachedBodyRequest.formReadUpstream(request, body)
                ? java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(request.getParameterMap()))
                : null;
        byte[] fingerprinted = upstream == null ? body : CachedBodyRequest.formBytes(upstream);
        Fingerprint fingerprint = fingerprinter.fingerprint(
                request.getMethod(),
                HttpProtocol.fingerprintTarget(path, request.getQueryString()),
                fingerprinted,
                request.getContentType());
        Scope scope = new Scope(tenant.get(), request.getMethod(), route.pathTemplate(), key);
        IdempotencyRequest idempotencyRequest = IdempotencyRequest.of(scope, fingerprint, route.policy());

        if (bypass.active()) {
            passThrough(request, response, chain, body, upstream);
            return;
        }
        Execution execution = new Execution(request, response, chain, route, body, upstream);
        IdempotentResult result;
        try {
            result = engine.execute(idempotencyRequest, execution);
        } catch (StoreUnavailableException e) {
            if (!execution.started()) {
                if (!bypass.passesAfterFailure()) {
                    throw e;
                }
                passThrough(request, response, chain, body, upstream);
                return;
            }
            // the handler ran (a renewal inside it failed, say): it may have taken effect
            if (response.isCommitted()) {
                throw e;
            }
            writeProblem(
                    response,
                    Problems.outcomeUnknown("the idempotency store failed while the request ran"),
                    retryAfter(e));
            return;
        } catch (IOException | ServletException | RuntimeException | Error e) {
            throw e;
        } catch (Exception other) {
            throw new ServletException(other);
        }
        if (result.replayed()) {
            writeReplay(response, result.response(), result.expiresAt());
        } else {
            execution.writeFresh(result.expiresAt());
        }
    }

    /** The handler, unguarded: the body it was sent, the {@link #UNGUARDED} mark, no lease, nothing recorded. */
    private static void passThrough(
            HttpServletRequest request,
            HttpServletResponse response,
            FilterChain chain,
            byte[] body,
            @Nullable Map<String, String[]> upstream)
            throws IOException, ServletException {
        CachedBodyRequest unguarded = new CachedBodyRequest(request, body, null, upstream);
        unguarded.setAttribute(UNGUARDED, true);
        chain.doFilter(unguarded, response);
    }

    private static void addAll(List<String> into, @Nullable Enumeration<String> values) {
        if (values != null) {
            while (values.hasMoreElements()) {
                into.add(values.nextElement());
            }
        }
    }

    /** Runs the handler under the lease and turns its captured response into an {@link Outcome}. */
    private final class Execution implements GuardedAction {
        private final HttpServletRequest request;
        private final HttpServletResponse response;
        private final FilterChain chain;
        private final IdempotentRoute route;
        private final byte[] body;
        private final @Nullable Map<String, String[]> upstreamParameters;
        private @Nullable CapturedResponse captured;
        private @Nullable Exception failedAfterHead;
        private volatile boolean started;

        Execution(
                HttpServletRequest request,
                HttpServletResponse response,
                FilterChain chain,
                IdempotentRoute route,
                byte[] body,
                @Nullable Map<String, String[]> upstreamParameters) {
            this.request = request;
            this.response = response;
            this.chain = chain;
            this.route = route;
            this.body = body;
            this.upstreamParameters = upstreamParameters;
        }

        @Override
        public Outcome run(Lease lease) throws IOException, ServletException {
            started = true;
            CachedBodyRequest wrapped = new CachedBodyRequest(request, body, lease, upstreamParameters);
            CapturingResponse capture = new CapturingResponse(response, maxStoredResponseBytes, this::commitStreamed);
            try {
                chain.doFilter(wrapped, capture);
            } catch (IOException | ServletException | RuntimeException e) {
                if (!capture.streamed()) {
                    throw e;
                }
                // the head left before the handler failed in the middle of its body: its status was decided
                // and a record promised (Idempotency-Expires); it ran. The streamed outcome is recorded, and the
                // failure rethrown once it is, so that the container breaks off the response.
                failedAfterHead = e;
            }
            CapturedResponse result = capture.finish();
            captured = result;
            return RecordingRule.outcome(
                    route,
                    result.status(),
                    result.contentType(),
                    result.body(),
                    request.getAttribute(DO_NOT_RECORD) != null,
                    toStored(result));
        }

        /** The body outgrew the storage limit: send the head now and stream the rest. */
        private OutputStream commitStreamed(CapturedResponse head) throws IOException {
            boolean released =
                    request.getAttribute(DO_NOT_RECORD) != null || RecordingRule.releasedByStatus(route, head.status());
            Instant expires =
                    released ? null : clock.instant().plus(route.policy().retention());
            writeHead(response, head, expires);
            return response.getOutputStream();
        }

        /** Whether the handler was called. */
        boolean started() {
            return started;
        }

        void writeFresh(@Nullable Instant expiresAt) throws IOException, ServletException {
            CapturedResponse result = Objects.requireNonNull(captured, "the handler ran");
            byte[] bytes = result.body();
            if (bytes == null) {
                switch (failedAfterHead) {
                    case null -> {}
                    case IOException e -> throw e;
                    case ServletException e -> throw e;
                    case RuntimeException e -> throw e;
                    default -> throw new ServletException(failedAfterHead);
                }
                return; // already streamed
            }
            writeHead(response, result, expiresAt);
            writeBody(response, result.status(), bytes);
        }
    }

    private StoredResponse toStored(CapturedResponse captured) {
        Map<String, List<String>> headers = headerPolicy.filter(captured.headers());
        byte[] body = captured.body();
        if (body != null) {
            return new StoredResponse(captured.status(), headers, body);
        }
        return HttpProtocol.notStored(captured.status(), headers, captured.bodyBytes(), maxStoredResponseBytes);
    }

    private static void writeHead(HttpServletResponse response, CapturedResponse head, @Nullable Instant expiresAt) {
        response.setStatus(head.status());
        for (CapturedResponse.Header header : head.headers()) {
            setHeader(response, header.name(), header.values());
        }
        for (Cookie cookie : head.cookies()) {
            response.addCookie(cookie);
        }
        if (expiresAt != null) {
            response.setHeader(EXPIRES_HEADER, HttpDates.format(expiresAt));
        }
    }

    private static void writeReplay(HttpServletResponse response, StoredResponse stored, @Nullable Instant expiresAt)
            throws IOException {
        int status = stored.status();
        response.setStatus(status);
        for (Map.Entry<String, List<String>> header : stored.headers().entrySet()) {
            setHeader(response, header.getKey(), header.getValue());
        }
        response.setHeader(REPLAYED_HEADER, "true");
        response.setHeader(LEGACY_REPLAYED_HEADER, "true");
        if (expiresAt != null) {
            response.setHeader(EXPIRES_HEADER, HttpDates.format(expiresAt));
        }
        if (status == 204 || status == 304 || status < 200) {
            return;
        }
        int length = stored.bodyLength();
        response.setContentLength(length);
        if (length > 0) {
            ServletOutputStream out = response.getOutputStream();
            stored.writeBodyTo(out); // the stored bytes themselves: no copy per replay
            out.flush();
        }
    }

    private void writeProblem(HttpServletResponse response, Problem problem, Map<String, String> headers)
            throws IOException {
        response.setStatus(problem.status());
        response.setHeader("Content-Type", Problem.MEDIA_TYPE);
        response.setHeader("Cache-Control", "no-store");
        headers.forEach(response::setHeader);
        writeBody(response, problem.status(), problem.toJson());
    }

    private static void setHeader(HttpServletResponse response, String name, List<String> values) {
        for (int i = 0; i < values.size(); i++) {
            if (i == 0) {
                response.setHeader(name, values.get(i));
            } else {
                response.addHeader(name, values.get(i));
            }
        }
    }

    private static void writeBody(HttpServletResponse response, int status, byte[] body) throws IOException {
        if (status == 204 || status == 304 || status < 200) {
            return;
        }
        response.setContentLength(body.length);
        if (body.length > 0) {
            ServletOutputStream out = response.getOutputStream();
            out.write(body);
            out.flush();
        }
    }

    private Map<String, String> retryAfter(IdempotencyException e) {
        return HttpProtocol.retryAfter(e, storeUnavailableRetryAfter)
                .map(seconds -> Map.of("Retry-After", seconds))
                .orElse(Map.of());
    }

    /** The context-relative, decoded and normalised path the container mapped the request with. */
    private static String path(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        String path;
        if (pathInfo == null) {
            path = servletPath == null ? "" : servletPath;
        } else {
            path = servletPath == null || servletPath.isEmpty() ? pathInfo : servletPath + pathInfo;
        }
        return path.isEmpty() ? "/" : path;
    }

    @Override
    public String toString() {
        return "IdempotencyFilter[routes=" + routes.routes().size() + ", tenant=" + tenantResolver + "]";
    }

    /** Validating builder. Immutable filters come out of it; the builder itself is not thread-safe. */
    public static final class Builder {
        private final IdempotencyEngine engine;
        private final List<IdempotentRoute> routes = new ArrayList<>();
        private TenantResolver tenantResolver = TenantResolver.principal();
        private Fingerprinter fingerprinter = Fingerprinter.ofDefaults();
        private final List<String> replayHeaders = new ArrayList<>();
        private final List<String> credentialHeaders = new ArrayList<>();
        private int maxStoredResponseBytes = DEFAULT_MAX_STORED_RESPONSE_BYTES;
        private Duration storeUnavailableRetryAfter = DEFAULT_STORE_UNAVAILABLE_RETRY_AFTER;
        private StoreUnavailablePolicy storeUnavailablePolicy = StoreUnavailablePolicy.REFUSE;
        private String challenge = DEFAULT_CHALLENGE;
        private InstantSource clock = InstantSource.system();
        private String keyHeader = KEY_HEADER;
        private List<String> keyHeaderAliases = List.of(KEY_ALIAS_HEADER);

        private Builder(IdempotencyEngine engine) {
            this.engine = Objects.requireNonNull(engine, "engine");
        }

        /** Adds a guarded route; routes are matched in the order they were added. */
        public Builder route(IdempotentRoute route) {
            routes.add(Objects.requireNonNull(route, "route"));
            return this;
        }

        /** Adds a route with a required key and the default policy. */
        public Builder route(String method, String pathTemplate) {
            return route(IdempotentRoute.of(method, pathTemplate));
        }

        public Builder routes(Collection<IdempotentRoute> routes) {
            routes.forEach(this::route);
            return this;
        }

        /** Where the tenant comes from; default {@link TenantResolver#principal()}. */
        public Builder tenantResolver(TenantResolver tenantResolver) {
            this.tenantResolver = Objects.requireNonNull(tenantResolver, "tenantResolver");
            return this;
        }

        /** The fingerprinter; its body limit is the 413 limit. Default {@link Fingerprinter#ofDefaults()}. */
        public Builder fingerprinter(Fingerprinter fingerprinter) {
            this.fingerprinter = Objects.requireNonNull(fingerprinter, "fingerprinter");
            return this;
        }

        /** Shorthand for a default fingerprinter with this body limit (answering 413 above it). */
        public Builder maxRequestBodyBytes(int maxRequestBodyBytes) {
            return fingerprinter(Fingerprinter.withMaxBodyBytes(maxRequestBodyBytes));
        }

        /** The largest response body stored for replay (default 1 MiB); larger ones are streamed. */
        public Builder maxStoredResponseBytes(int maxStoredResponseBytes) {
            if (maxStoredResponseBytes < 1024) {
                throw new IllegalArgumentException("maxStoredResponseBytes must be at least 1024");
            }
            this.maxStoredResponseBytes = maxStoredResponseBytes;
            return this;
        }

        /**
         * More response headers to store and replay, on top of Content-Type, Content-Language, Location,
         * ETag, Cache-Control and Link. Credential headers are never replayed, even if named here.
         */
        public Builder replayHeaders(String... names) {
            replayHeaders.addAll(HttpProtocol.headerNames(names));
            return this;
        }

        /**
         * Headers that carry credentials in this application: never stored or replayed, even if
         * allow-listed (Set-Cookie, Authorization, Proxy-Authorization, WWW-Authenticate, Cookie and
         * the like always are denied).
         */
        public Builder credentialHeaders(String... names) {
            credentialHeaders.addAll(HttpProtocol.headerNames(names));
            return this;
        }

        /** The {@code Retry-After} of a 503 for an unavailable store (default 2 s, at least 1 s). */
        public Builder storeUnavailableRetryAfter(Duration retryAfter) {
            if (retryAfter.isNegative()) {
                throw new IllegalArgumentException("retryAfter must not be negative");
            }
            this.storeUnavailableRetryAfter = retryAfter;
            return this;
        }

        /**
         * What a guarded route does when the store fails before the handler was called (default
         * {@link StoreUnavailablePolicy#REFUSE}: 503); see {@link StoreUnavailablePolicy#PASS_THROUGH} for
         * when passing the request through unguarded is safe.
         */
        public Builder whenStoreUnavailable(StoreUnavailablePolicy policy) {
            this.storeUnavailablePolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** The {@code WWW-Authenticate} challenge of the 401 for an unresolved tenant (default {@code Bearer}). */
        public Builder unauthenticatedChallenge(String challenge) {
            if (challenge.isBlank()) {
                throw new IllegalArgumentException("challenge must not be blank");
            }
            this.challenge = challenge;
            return this;
        }

        /**
         * The clock for the {@code Idempotency-Expires} estimate of a streamed response (whose headers
         * leave before the record is written). Default: the system clock.
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The header naming the key (default {@value #KEY_HEADER}) and the other headers accepted for it
         * (default {@value #KEY_ALIAS_HEADER}; none to accept only {@code name}). A request may send
         * several of them; they must all name the same key.
         */
        public Builder keyHeader(String name, String... aliases) {
            List<String> headers = HttpProtocol.keyHeaders(name, aliases);
            this.keyHeader = headers.getFirst();
            this.keyHeaderAliases = headers.subList(1, headers.size());
            return this;
        }

        public IdempotencyFilter build() {
            return new IdempotencyFilter(this);
        }
    }
}
