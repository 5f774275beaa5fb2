package dev.exactly.idempotency.spring.boot.actuate;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.InvalidIdempotencyKeyException;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import java.security.Principal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;

/**
 * The Actuator endpoint {@code idempotency}, for operators: off unless enabled
 * ({@code management.endpoint.idempotency.access=read-only} or {@code unrestricted}) and exposed
 * ({@code management.endpoints.web.exposure.include=idempotency}). It reads and releases records of other
 * tenants, so expose it to operators only (behind Spring Security, or on a management port of its own).
 *
 * <ul>
 *   <li>{@code GET /actuator/idempotency/{tenant}/{key}}: the records of that tenant and key on every
 *       guarded route (or only {@code ?method=POST&route=/v1/charges}): status, fingerprint algorithm,
 *       lease end, expiry, and for a finished record the recorded status, header names and body size
 *       (never the body, which may hold personal data; nor the owner token);</li>
 *   <li>{@code DELETE /actuator/idempotency/{tenant}/{key}?method=POST&route=/v1/charges} (access
 *       {@code unrestricted}): releases a record stuck in {@code PROCESSING}, fenced by the owner token
 *       read just before (if the record changed meanwhile, nothing happens: 409), so that a retry with the
 *       same key runs again. Logged as a warning (the audit line: who, which tenant, route and scope hash).
 *       Release only a request you know did not take effect, or whose effect the retry may repeat: a
 *       released key runs its handler again.</li>
 * </ul>
 * A key may hold {@code /} (the rest of the path is the key). Answers 400 for an invalid key or route, 404
 * when there is no record, 503 when the store does not answer.
 */
@WebEndpoint(id = "idempotency", defaultAccess = Access.NONE)
public class IdempotencyEndpoint {
    private static final Log audit = LogFactory.getLog(IdempotencyEndpoint.class);

    private final IdempotencyEngine engine;
    private final Supplier<List<IdempotentRoute>> routes;

    /**
     * @param engine the engine whose store holds the records
     * @param routes the guarded routes, searched when a read names none
     */
    public IdempotencyEndpoint(IdempotencyEngine engine, Supplier<List<IdempotentRoute>> routes) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.routes = Objects.requireNonNull(routes, "routes");
    }

    /** The records of {@code tenant} and {@code key}, on one route or on each guarded route. */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> records(
            @Selector String tenant,
            @Selector(match = Selector.Match.ALL_REMAINING) String[] key,
            @Nullable String method,
            @Nullable String route) {
        return records(tenant, String.join("/", key), method, route);
    }

    private WebEndpointResponse<Map<String, Object>> records(
            String tenant, String key, @Nullable String method, @Nullable String route) {
        List<Target> targets;
        try {
            targets = targets(tenant, key, method, route);
        } catch (IllegalArgumentException e) {
            return error(400, e.getMessage());
        }
        List<Map<String, Object>> found = new ArrayList<>();
        try {
            for (Target target : targets) {
                engine.find(target.scopeKey()).ifPresent(record -> found.add(view(target, record)));
            }
        } catch (StoreUnavailableException e) {
            return error(503, "the idempotency store did not answer: " + e.getMessage());
        }
        if (found.isEmpty()) {
            return error(
                    404,
                    "no record of this tenant and key"
                            + (route == null
                                    ? " on any guarded route"
                                    : " on " + targets.getFirst().method() + " "
                                            + targets.getFirst().route()));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("tenant", tenant);
        body.put("records", found);
        return new WebEndpointResponse<>(body, 200);
    }

    /**
     * Releases the record of {@code tenant} and {@code key} on {@code method} {@code route} if it is still
     * {@code PROCESSING}, fenced by its current owner token.
     */
    @DeleteOperation
    public WebEndpointResponse<Map<String, Object>> release(
            @Selector String tenant,
            @Selector(match = Selector.Match.ALL_REMAINING) String[] keySegments,
            @Nullable String method,
            @Nullable String route,
            @Nullable Principal principal) {
        String key = String.join("/", keySegments);
        if (method == null || route == null) {
            return error(400, "name the record to release with ?method=...&route=... (as the read shows them)");
        }
        Target target;
        try {
            target = targets(tenant, key, method, route).getFirst();
        } catch (IllegalArgumentException e) {
            return error(400, e.getMessage());
        }
        try {
            Optional<IdempotencyRecord> record = engine.find(target.scopeKey());
            if (record.isEmpty()) {
                return error(404, "no record of this tenant and key on " + target.method() + " " + target.route());
            }
            OwnerToken owner = record.get().owner();
            if (record.get().status() != RecordStatus.PROCESSING || owner == null) {
                return error(
                        409,
                        "the record is " + status(record.get().status())
                                + ", not processing: only a request stuck in flight is released");
            }
            if (!engine.store().release(target.scopeKey(), owner)) {
                return error(
                        409,
                        "the record changed while it was being released (it finished, or another "
                                + "request took it over); read it again");
            }
        } catch (StoreUnavailableException e) {
            return error(503, "the idempotency store did not answer: " + e.getMessage());
        } catch (RuntimeException e) {
            return error(503, "the idempotency store failed: " + e);
        }
        audit.warn("Idempotency record released by an operator: principal="
                + (principal == null ? "(none)" : principal.getName())
                + ", tenant=" + tenant + ", " + target.method() + " " + target.route() + ", scope=" + target.scopeKey()
                + "; a retry with its key runs again");
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("released", true);
        body.put("tenant", tenant);
        body.put("method", target.method());
        body.put("route", target.route());
        body.put("scope", target.scopeKey().hash());
        return new WebEndpointResponse<>(body, 200);
    }

    private record Target(String method, String route, ScopeKey scopeKey) {}

    private List<Target> targets(String tenant, String key, @Nullable String method, @Nullable String route) {
        if (tenant.isBlank()) {
            throw new IllegalArgumentException("the tenant is empty");
        }
        IdempotencyKey parsed;
        try {
            parsed = IdempotencyKey.parse(key);
        } catch (InvalidIdempotencyKeyException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        if (route != null || method != null) {
            if (route == null || method == null) {
                throw new IllegalArgumentException("give both method and route, or neither");
            }
            String upper = method.strip().toUpperCase(Locale.ROOT);
            return List.of(new Target(upper, route, new Scope(tenant, upper, route, parsed).toScopeKey()));
        }
        List<Target> targets = new ArrayList<>();
        for (IdempotentRoute guarded : routes.get()) {
            targets.add(new Target(
                    guarded.method(),
                    guarded.pathTemplate(),
                    new Scope(tenant, guarded.method(), guarded.pathTemplate(), parsed).toScopeKey()));
        }
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("no guarded routes: name one with ?method=...&route=...");
        }
        return targets;
    }

    private static Map<String, Object> view(Target target, IdempotencyRecord record) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("method", target.method());
        view.put("route", target.route());
        view.put("scope", record.key().hash());
        view.put("status", status(record.status()));
        view.put("fingerprintAlgorithm", record.fingerprint().algorithm());
        view.put("createdAt", record.createdAt().toString());
        Instant leaseEnd = record.leaseExpiresAt();
        if (record.status() == RecordStatus.PROCESSING && leaseEnd != null) {
            view.put("leaseExpiresAt", leaseEnd.toString());
        }
        view.put("expiresAt", record.expiresAt().toString());
        StoredResponse response = record.response();
        if (response != null) {
            Map<String, Object> recorded = new LinkedHashMap<>();
            recorded.put("status", response.status());
            recorded.put("headers", List.copyOf(response.headers().keySet()));
            recorded.put("bodyBytes", response.bodyLength());
            view.put("response", recorded);
        }
        return view;
    }

    private static String status(RecordStatus status) {
        return status.name().toLowerCase(Locale.ROOT);
    }

    private static WebEndpointResponse<Map<String, Object>> error(int status, @Nullable String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status);
        body.put("error", String.valueOf(message));
        return new WebEndpointResponse<>(body, status);
    }
}
