package dev.exactly.idempotency.webflux;

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
import dev.exactly.idempotency.PayloadTooLargeException;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.servlet.HttpProtocol;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.Problem;
import dev.exactly.idempotency.servlet.Problems;
import dev.exactly.idempotency.servlet.StoreUnavailablePolicy;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.ErrorResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A Spring WebFlux {@link WebFilter} that makes configured routes idempotent, with the HTTP semantics of the
 * servlet {@code IdempotencyFilter} (see its documentation and {@code docs/http-semantics.md}): the same
 * routes, key headers, problem documents, recording rules, replay headers and {@code Idempotency-Expires};
 * a store that fails before the handler is 503 {@code idempotency-store-unavailable} (or, with
 * {@link StoreUnavailablePolicy#PASS_THROUGH}, the handler unguarded), while it runs 503
 * {@code outcome-unknown}, after it the handler's own answer (recorded in the background).
 *
 * <h2>Threads</h2>
 * Nothing here blocks an event-loop thread. The tenant is resolved and the body read (bounded) reactively;
 * then the fingerprint, every store call of the engine (claim, wait, record, release, keep-alive) and the
 * wait for the handler run on a worker ({@link Builder#scheduler}, by default a virtual thread per request),
 * which subscribes to the rest of the chain and waits for it to complete: the handler itself runs wherever
 * it runs (an event loop for a non-blocking handler). The response is captured until the handler completes,
 * then written (or replayed) from the worker.
 *
 * <p>The running {@link Lease} is the exchange attribute {@link #LEASE} while the handler runs; a handler
 * marks its response as not to be recorded with the exchange attribute {@link #DO_NOT_RECORD}. Instances are
 * immutable and thread-safe.
 */
public final class IdempotencyWebFilter implements WebFilter, Ordered {
    /*
     * The exchange attributes have the names of the servlet filter's request attributes (HttpProtocol), so that
     * code that reads the lease or marks a response (a shared helper, a handler moved from one stack to the
     * other) works under either filter.
     */
    /** An exchange attribute holding the running {@link Lease} while the handler runs ({@code IdempotencyFilter#LEASE}). */
    public static final String LEASE = HttpProtocol.LEASE_ATTRIBUTE;
    /**
     * An exchange attribute: set (to any value) by a handler, its response is not recorded and the key released
     * ({@code IdempotencyFilter#DO_NOT_RECORD}).
     */
    public static final String DO_NOT_RECORD = HttpProtocol.DO_NOT_RECORD_ATTRIBUTE;
    /**
     * An exchange attribute ({@code Boolean.TRUE}) of a request on a guarded route that the handler gets
     * without the guard: the store was unavailable and the filter passes requests through
     * ({@link StoreUnavailablePolicy#PASS_THROUGH}; {@code IdempotencyFilter#UNGUARDED}).
     */
    public static final String UNGUARDED = HttpProtocol.UNGUARDED_ATTRIBUTE;
    /** The default order: after Spring Security's WebFilter (-100), so that the principal is known. */
    public static final int DEFAULT_ORDER = 0;

    private static final String APPLIED = IdempotencyWebFilter.class.getName() + ".APPLIED";
    /** Set once the request body has been subscribed to (read for the fingerprint, or skipped before an early answer). */
    private static final String BODY_TAKEN = IdempotencyWebFilter.class.getName() + ".BODY_TAKEN";

    private final IdempotencyEngine engine;
    private final List<IdempotentRoute> routeList;
    private final HttpProtocol.RouteMatcher routes;
    private final ReactiveTenantResolver tenantResolver;
    private final Fingerprinter fingerprinter;
    private final Function<Map<String, List<String>>, Map<String, List<String>>> replayed;
    private final int maxStoredResponseBytes;
    private final Duration storeUnavailableRetryAfter;
    private final HttpProtocol.StoreBypass bypass;
    private final String challenge;
    private final InstantSource clock;
    private final String keyHeader;
    private final List<String> keyHeaderAliases;
    private final Scheduler scheduler;
    private final int order;

    private IdempotencyWebFilter(Builder builder) {
        this.engine = builder.engine;
        this.routeList = List.copyOf(builder.routes);
        this.routes = HttpProtocol.routes(routeList);
        this.tenantResolver = builder.tenantResolver;
        this.fingerprinter = builder.fingerprinter;
        this.replayed = HttpProtocol.replayedHeaders(builder.replayHeaders, builder.credentialHeaders);
        this.maxStoredResponseBytes = builder.maxStoredResponseBytes;
        this.storeUnavailableRetryAfter = builder.storeUnavailableRetryAfter;
        this.bypass = new HttpProtocol.StoreBypass(builder.storeUnavailablePolicy, builder.storeUnavailableRetryAfter);
        this.challenge = builder.challenge;
        this.clock = builder.clock;
        this.keyHeader = builder.keyHeader;
        this.keyHeaderAliases = List.copyOf(builder.keyHeaderAliases);
        this.scheduler = builder.scheduler != null ? builder.scheduler : virtualThreads();
        this.order = builder.order;
    }

    private static Scheduler virtualThreads() {
        return Schedulers.fromExecutorService(
                Executors.newThreadPerTaskExecutor(
                        Thread.ofVirtual().name("exactly-webflux-", 0).factory()),
                "exactly-webflux");
    }

    public static Builder builder(IdempotencyEngine engine) {
        return new Builder(engine);
    }

    /** The guarded routes, in matching order. */
    public List<IdempotentRoute> routes() {
        return routeList;
    }

    /** The header naming the key. */
    public String keyHeader() {
        return keyHeader;
    }

    @Override
    public int getOrder() {
        return order;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (exchange.getAttribute(APPLIED) != null) {
            return chain.filter(exchange);
        }
        ServerHttpRequest request = exchange.getRequest();
        String method = request.getMethod().name();
        String path = decodedPath(request);
        IdempotentRoute route = routes.match(method, path);
        if (route == null) {
            return chain.filter(exchange);
        }
        exchange.getAttributes().put(APPLIED, true);
        List<String> keys = new ArrayList<>(request.getHeaders().getOrEmpty(keyHeader));
        for (String alias : keyHeaderAliases) {
            keys.addAll(request.getHeaders().getOrEmpty(alias));
        }
        if (keys.isEmpty() && !route.keyRequired()) {
            return chain.filter(exchange);
        }
        return tenantResolver
                .resolve(exchange)
                .filter(tenant -> !tenant.isBlank())
                .map(tenant -> guard(exchange, chain, route, path, tenant, keys))
                .defaultIfEmpty(Mono.defer(() -> skipBody(exchange)
                        .then(writeProblem(
                                exchange.getResponse(),
                                Problems.tenantUnresolved(),
                                Map.of(HttpHeaders.WWW_AUTHENTICATE, challenge)))))
                .flatMap(Function.identity())
                .onErrorResume(e -> {
                    if (exchange.getResponse().isCommitted()) {
                        return Mono.error(e);
                    }
                    if (!(e instanceof IdempotencyException refusal)) {
                        return skipBody(exchange).then(Mono.error(e)); // e.g. a tenant resolver that failed
                    }
                    return skipBody(exchange)
                            .then(Mono.defer(() -> writeProblem(
                                    exchange.getResponse(),
                                    HttpProtocol.problem(refusal, keyHeader),
                                    retryAfter(refusal))));
                });
    }

    /**
     * Before an answer given without reading the request (no tenant, no key, a refused type or length): reads the
     * body, up to the fingerprint's limit, and drops it; the server discards what is left after the answer. Reactor
     * Netty before 1.3.8 could leave the next request of a keep-alive connection unanswered when the one before it
     * was answered at once, unread (29 of 400 such pairs from the JDK client); an answer that waits for the body is
     * not given at once.
     */
    private Mono<Void> skipBody(ServerWebExchange exchange) {
        if (exchange.getAttributes().putIfAbsent(BODY_TAKEN, true) != null) {
            return Mono.empty();
        }
        ServerHttpRequest request = exchange.getRequest();
        long limit = fingerprinter.maxBodyBytes();
        if (request.getHeaders().getContentLength() > limit) {
            return Mono.empty();
        }
        long[] seen = {0};
        return request.getBody()
                .map(buffer -> {
                    seen[0] += buffer.readableByteCount();
                    DataBufferUtils.release(buffer);
                    return seen[0];
                })
                .takeUntil(total -> total > limit)
                .then()
                .onErrorResume(e -> Mono.empty());
    }

    /**
     * The context-relative path the handler mappings match: each segment percent-decoded and without its path
     * parameters ({@code /v1/%63harges;v=1} is {@code /v1/charges}), as the servlet filter reads it from the
     * container. A {@code /} or {@code ;} that a segment decodes to stays encoded, so that it splits nothing.
     */
    static String decodedPath(ServerHttpRequest request) {
        PathContainer within = request.getPath().pathWithinApplication();
        String raw = within.value();
        if (raw.indexOf('%') < 0 && raw.indexOf(';') < 0) {
            return raw.isEmpty() ? "/" : raw;
        }
        StringBuilder path = new StringBuilder(raw.length());
        for (PathContainer.Element element : within.elements()) {
            if (element instanceof PathContainer.PathSegment segment) {
                String value = segment.valueToMatch();
                path.append(
                        value.indexOf('/') < 0 && value.indexOf(';') < 0
                                ? value
                                : value.replace("/", "%2F").replace(";", "%3B"));
            } else {
                path.append('/');
            }
        }
        return path.isEmpty() ? "/" : path.toString();
    }

    private Mono<Void> guard(
            ServerWebExchange exchange,
            WebFilterChain chain,
            IdempotentRoute route,
            String path,
            String tenant,
            List<String> keys) {
        ServerHttpRequest request = exchange.getRequest();
        IdempotencyKey key = IdempotencyKey.parse(keys);
        // as sent, as the servlet filter reads it: a value MediaType cannot parse is the handler's to refuse
        String type = request.getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
        if (HttpProtocol.isMultipart(type)) {
            return skipBody(exchange)
                    .then(Mono.defer(
                            () -> writeProblem(exchange.getResponse(), HttpProtocol.multipartRefused(), Map.of())));
        }
        fingerprinter.checkLength(request.getHeaders().getContentLength());
        int limit = fingerprinter.maxBodyBytes();
        exchange.getAttributes().put(BODY_TAKEN, true);
        return DataBufferUtils.join(request.getBody(), limit)
                .map(joined -> {
                    byte[] bytes = new byte[joined.readableByteCount()];
                    joined.read(bytes);
                    DataBufferUtils.release(joined);
                    return bytes;
                })
                .defaultIfEmpty(new byte[0])
                .onErrorMap(DataBufferLimitException.class, e -> new PayloadTooLargeException(limit))
                .flatMap(body -> execute(
                        exchange,
                        chain,
                        route,
                        path,
                        new Scope(tenant, request.getMethod().name(), route.pathTemplate(), key),
                        body,
                        type));
    }

    /** Fingerprints and runs the engine on the worker; the handler is awaited there, never on an event loop. */
    private Mono<Void> execute(
            ServerWebExchange exchange,
            WebFilterChain chain,
            IdempotentRoute route,
            String path,
            Scope scope,
            byte[] body,
            @Nullable String contentType) {
        if (bypass.active()) {
            return passThrough(exchange, chain, body);
        }
        ServerHttpRequest request = exchange.getRequest();
        String query = request.getURI().getRawQuery();
        Execution execution = new Execution(exchange, chain, route, body);
        return Mono.defer(() -> {
                    // Not Mono.fromCallable(..).subscribeOn(..): a client that goes away cancels the answer, and
                    // a cancelled subscribeOn interrupts its worker, which failed the handler's block() and
                    // released the key of a handler that may have taken effect (its retry ran it again). The
                    // run goes on to its recorded outcome; only the answer to the departed client is dropped.
                    CompletableFuture<IdempotentResult> result = new CompletableFuture<>();
                    scheduler.schedule(() -> {
                        try {
                            Fingerprint fingerprint = fingerprinter.fingerprint(
                                    scope.method(), HttpProtocol.fingerprintTarget(path, query), body, contentType);
                            result.complete(engine.execute(
                                    IdempotencyRequest.of(scope, fingerprint, route.policy()), execution));
                        } catch (Throwable e) {
                            result.completeExceptionally(e);
                        }
                    });
                    return Mono.fromFuture(result, true);
                })
                .onErrorMap(Exceptions::unwrap)
                .flatMap(result -> result.replayed()
                        ? writeReplay(exchange.getResponse(), result.response(), result.expiresAt())
                        : execution.writeFresh(result.expiresAt()))
                .onErrorResume(StoreUnavailableException.class, e -> {
                    if (!execution.started() && !exchange.getResponse().isCommitted() && bypass.passesAfterFailure()) {
                        return passThrough(exchange, chain, body);
                    }
                    if (!execution.started() || exchange.getResponse().isCommitted()) {
                        return Mono.error(e);
                    }
                    // the handler ran (a renewal inside it failed, say): it may have taken effect
                    return writeProblem(
                            exchange.getResponse(),
                            Problems.outcomeUnknown("the idempotency store failed while the request ran"),
                            retryAfter(e));
                });
    }

    /** The handler, unguarded: the body it was sent, the {@link #UNGUARDED} mark, no lease, nothing recorded. */
    private static Mono<Void> passThrough(ServerWebExchange exchange, WebFilterChain chain, byte[] body) {
        CachedBodyRequest request = new CachedBodyRequest(exchange.getRequest(), body);
        exchange.getAttributes().put(UNGUARDED, true);
        return chain.filter(
                new CachedFormExchange(exchange.mutate().request(request).build(), request));
    }

    /** Runs the rest of the chain under the lease, on the worker, and turns its captured response into an {@link Outcome}. */
    private final class Execution implements GuardedAction {
        private final ServerWebExchange exchange;
        private final WebFilterChain chain;
        private final IdempotentRoute route;
        private final byte[] body;
        private volatile CapturingResponse.@Nullable Captured captured;
        private volatile boolean started;
        private volatile @Nullable RuntimeException failedAfterHead;

        Execution(ServerWebExchange exchange, WebFilterChain chain, IdempotentRoute route, byte[] body) {
            this.exchange = exchange;
            this.chain = chain;
            this.route = route;
            this.body = body;
        }

        @Override
        public Outcome run(Lease lease) {
            started = true;
            CapturingResponse capture =
                    new CapturingResponse(exchange.getResponse(), maxStoredResponseBytes, this::commitStreamed);
            CachedBodyRequest request = new CachedBodyRequest(exchange.getRequest(), body);
            ServerWebExchange decorated = new CachedFormExchange(
                    exchange.mutate().request(request).response(capture).build(), request);
            exchange.getAttributes().put(LEASE, lease);
            try {
                chain.filter(decorated).block();
            } catch (RuntimeException e) {
                // WebFlux answers a handler's ResponseStatusException (any ErrorResponse) outside the filter
                // chain, where Spring MVC answers it inside: it is the handler's answer, recorded as one (a 402
                // replayed, not a second attempt on retry), written as its RFC 9457 problem document
                if (capture.isCommitted()) {
                    // the head left before the handler failed in the middle of its body: it ran, and a record was
                    // promised; the streamed outcome is recorded, and the failure passed on once it is
                    failedAfterHead = e;
                } else if (Exceptions.unwrap(e) instanceof ErrorResponse error) {
                    capture.answer(error);
                } else {
                    throw e;
                }
            } finally {
                exchange.getAttributes().remove(LEASE);
            }
            if (!capture.isCommitted()) {
                capture.commit().block(); // what the commit adds (security headers, say) is recorded with the rest
            }
            CapturingResponse.Captured result = capture.finish();
            captured = result;
            return HttpProtocol.outcome(
                    route,
                    result.status(),
                    result.contentType(),
                    result.body(),
                    exchange.getAttribute(DO_NOT_RECORD) != null,
                    stored(result));
        }

        /** The body outgrew the storage limit: send the head now, the body follows as it is written. */
        private void commitStreamed(CapturingResponse.Captured head) {
            boolean released =
                    exchange.getAttribute(DO_NOT_RECORD) != null || HttpProtocol.releasedByStatus(route, head.status());
            writeHead(
                    exchange.getResponse(),
                    head,
                    released ? null : clock.instant().plus(route.policy().retention()));
        }

        boolean started() {
            return started;
        }

        Mono<Void> writeFresh(@Nullable Instant expiresAt) {
            CapturingResponse.Captured result = Objects.requireNonNull(captured, "the handler ran");
            byte[] bytes = result.body();
            if (bytes == null) {
                RuntimeException failure = failedAfterHead;
                return failure == null ? Mono.empty() : Mono.error(failure); // already streamed
            }
            ServerHttpResponse response = exchange.getResponse();
            writeHead(response, result, expiresAt);
            return writeBody(response, result.status(), bytes);
        }
    }

    private StoredResponse stored(CapturingResponse.Captured captured) {
        Map<String, List<String>> headers = replayed.apply(captured.headers());
        byte[] body = captured.body();
        if (body != null) {
            return new StoredResponse(captured.status(), headers, body);
        }
        return HttpProtocol.notStored(captured.status(), headers, captured.bodyBytes(), maxStoredResponseBytes);
    }

    private static void writeHead(
            ServerHttpResponse response, CapturingResponse.Captured head, @Nullable Instant expiresAt) {
        response.setStatusCode(HttpStatusCode.valueOf(head.status()));
        head.headers().forEach((name, values) -> response.getHeaders().put(name, values));
        head.cookies().values().forEach(cookies -> cookies.forEach(response::addCookie));
        if (expiresAt != null) {
            response.getHeaders().set(HttpProtocol.EXPIRES_HEADER, HttpProtocol.httpDate(expiresAt));
        }
    }

    private static Mono<Void> writeReplay(
            ServerHttpResponse response, StoredResponse stored, @Nullable Instant expiresAt) {
        response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
        stored.headers().forEach((name, values) -> response.getHeaders().put(name, values));
        response.getHeaders().set(HttpProtocol.REPLAYED_HEADER, "true");
        response.getHeaders().set(HttpProtocol.LEGACY_REPLAYED_HEADER, "true");
        if (expiresAt != null) {
            response.getHeaders().set(HttpProtocol.EXPIRES_HEADER, HttpProtocol.httpDate(expiresAt));
        }
        return writeBody(response, stored.status(), stored.body());
    }

    private static Mono<Void> writeProblem(ServerHttpResponse response, Problem problem, Map<String, String> headers) {
        response.setStatusCode(HttpStatusCode.valueOf(problem.status()));
        response.getHeaders().set(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE);
        response.getHeaders().set(HttpHeaders.CACHE_CONTROL, "no-store");
        headers.forEach((name, value) -> response.getHeaders().set(name, value));
        return writeBody(response, problem.status(), problem.toJson());
    }

    private static Mono<Void> writeBody(ServerHttpResponse response, int status, byte[] body) {
        if (status == 204 || status == 304 || status < 200) {
            return response.setComplete();
        }
        response.getHeaders().setContentLength(body.length);
        return body.length == 0
                ? response.setComplete()
                : response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    private Map<String, String> retryAfter(IdempotencyException e) {
        return HttpProtocol.retryAfter(e, storeUnavailableRetryAfter)
                .map(seconds -> Map.of(HttpHeaders.RETRY_AFTER, seconds))
                .orElse(Map.of());
    }

    @Override
    public String toString() {
        return "IdempotencyWebFilter[routes=" + routeList.size() + "]";
    }

    /** Validating builder, as {@code IdempotencyFilter.Builder}. */
    public static final class Builder {
        private final IdempotencyEngine engine;
        private final List<IdempotentRoute> routes = new ArrayList<>();
        private ReactiveTenantResolver tenantResolver = ReactiveTenantResolver.principal();
        private Fingerprinter fingerprinter = Fingerprinter.ofDefaults();
        private final List<String> replayHeaders = new ArrayList<>();
        private final List<String> credentialHeaders = new ArrayList<>();
        private int maxStoredResponseBytes = HttpProtocol.DEFAULT_MAX_STORED_RESPONSE_BYTES;
        private Duration storeUnavailableRetryAfter = HttpProtocol.DEFAULT_STORE_UNAVAILABLE_RETRY_AFTER;
        private StoreUnavailablePolicy storeUnavailablePolicy = StoreUnavailablePolicy.REFUSE;
        private String challenge = HttpProtocol.DEFAULT_CHALLENGE;
        private InstantSource clock = InstantSource.system();
        private String keyHeader = HttpProtocol.KEY_HEADER;
        private List<String> keyHeaderAliases = List.of(HttpProtocol.KEY_ALIAS_HEADER);
        private @Nullable Scheduler scheduler;
        private int order = DEFAULT_ORDER;

        private Builder(IdempotencyEngine engine) {
            this.engine = Objects.requireNonNull(engine, "engine");
        }

        /** Adds a guarded route; routes are matched in the order they were added. */
        public Builder route(IdempotentRoute route) {
            routes.add(Objects.requireNonNull(route, "route"));
            return this;
        }

        public Builder routes(Collection<IdempotentRoute> routes) {
            routes.forEach(this::route);
            return this;
        }

        /** Where the tenant comes from; default {@link ReactiveTenantResolver#principal()}. */
        public Builder tenantResolver(ReactiveTenantResolver tenantResolver) {
            this.tenantResolver = Objects.requireNonNull(tenantResolver, "tenantResolver");
            return this;
        }

        /** The fingerprinter: its limits are the 413 and {@code json-too-deep} limits. */
        public Builder fingerprinter(Fingerprinter fingerprinter) {
            this.fingerprinter = Objects.requireNonNull(fingerprinter, "fingerprinter");
            return this;
        }

        /** Shorthand for a default fingerprinter with this body limit. */
        public Builder maxRequestBodyBytes(int maxRequestBodyBytes) {
            return fingerprinter(Fingerprinter.withMaxBodyBytes(maxRequestBodyBytes));
        }

        /** The largest response body stored for replay (default 1 MiB, at least 1024). */
        public Builder maxStoredResponseBytes(int maxStoredResponseBytes) {
            if (maxStoredResponseBytes < 1024) {
                throw new IllegalArgumentException("maxStoredResponseBytes must be at least 1024");
            }
            this.maxStoredResponseBytes = maxStoredResponseBytes;
            return this;
        }

        /** More response headers to replay; credential headers never are. */
        public Builder replayHeaders(String... names) {
            replayHeaders.addAll(HttpProtocol.headerNames(names));
            return this;
        }

        /** Headers that carry credentials here: never stored or replayed. */
        public Builder credentialHeaders(String... names) {
            credentialHeaders.addAll(HttpProtocol.headerNames(names));
            return this;
        }

        /** The {@code Retry-After} of a 503 for an unavailable store (default 2 s). */
        public Builder storeUnavailableRetryAfter(Duration retryAfter) {
            if (retryAfter.isNegative()) {
                throw new IllegalArgumentException("retryAfter must not be negative");
            }
            this.storeUnavailableRetryAfter = retryAfter;
            return this;
        }

        /** What a guarded route does when the store fails before the handler (default: 503), as the servlet filter's. */
        public Builder whenStoreUnavailable(StoreUnavailablePolicy policy) {
            this.storeUnavailablePolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** The {@code WWW-Authenticate} challenge of the 401 for an unresolved tenant. */
        public Builder unauthenticatedChallenge(String challenge) {
            if (challenge.isBlank()) {
                throw new IllegalArgumentException("challenge must not be blank");
            }
            this.challenge = challenge;
            return this;
        }

        /** The clock of the {@code Idempotency-Expires} estimate of a streamed response. */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The header naming the key and its aliases (defaults as the servlet filter's). */
        public Builder keyHeader(String name, String... aliases) {
            List<String> headers = HttpProtocol.keyHeaders(name, aliases);
            this.keyHeader = headers.getFirst();
            this.keyHeaderAliases = headers.subList(1, headers.size());
            return this;
        }

        /**
         * Where the engine's store calls and the wait for the handler run; never an event loop's. Default: a
         * virtual thread per request.
         */
        public Builder scheduler(Scheduler scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** The filter's order (default {@value #DEFAULT_ORDER}: after Spring Security's). */
        public Builder order(int order) {
            this.order = order;
            return this;
        }

        public IdempotencyWebFilter build() {
            return new IdempotencyWebFilter(this);
        }
    }
}
