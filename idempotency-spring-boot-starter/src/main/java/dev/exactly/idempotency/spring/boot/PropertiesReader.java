package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.spring.boot.IdempotencyProperties.InFlight;
import dev.exactly.idempotency.spring.boot.IdempotencyProperties.KeepAliveSettings;
import dev.exactly.idempotency.spring.boot.IdempotencyProperties.Route;
import dev.exactly.idempotency.spring.boot.IdempotencyProperties.Tenant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.util.ClassUtils;
import org.springframework.util.unit.DataSize;

/**
 * Turns {@link IdempotencyProperties} into the library's immutable settings, and lists everything wrong
 * with them, each problem named by its property.
 */
final class PropertiesReader {
    static final String P = IdempotencyProperties.PREFIX + ".";
    static final String REDIS_STORE_CLASS = "dev.exactly.idempotency.redis.RedisIdempotencyStore";
    static final String POSTGRES_STORE_CLASS = "dev.exactly.idempotency.postgres.PostgresIdempotencyStore";
    private static final int MIN_STORED_RESPONSE_BYTES = 1024;
    private static final int MAX_PURGE_BATCH = 100_000;

    private PropertiesReader() {}

    /** Every problem of the configuration, in property order; empty when it is valid. */
    static List<String> problems(IdempotencyProperties properties) {
        List<String> problems = new ArrayList<>();
        check(problems, () -> defaultPolicy(properties));
        positive(problems, properties.getPollInterval(), "poll-interval");
        size(problems, properties.getMaxRequestBodySize(), 1, "max-request-body-size");
        if (properties.getMaxJsonDepth() < 1 || properties.getMaxJsonDepth() > 1000) {
            problems.add(P + "max-json-depth must be between 1 and 1000 (was " + properties.getMaxJsonDepth() + ")");
        }
        size(problems, properties.getMaxStoredResponseSize(), MIN_STORED_RESPONSE_BYTES, "max-stored-response-size");
        keyHeaders(problems, properties);
        headerNames(problems, properties.getReplayHeaders(), "replay-headers");
        headerNames(problems, properties.getCredentialHeaders(), "credential-headers");
        notNegative(problems, properties.getStoreUnavailableRetryAfter(), "store-unavailable-retry-after");
        routes(problems, properties);
        tenant(problems, properties.getTenant());
        store(problems, properties);
        return problems;
    }

    /** The configured routes, in order. */
    static List<IdempotentRoute> routes(IdempotencyProperties properties) {
        List<IdempotentRoute> routes = new ArrayList<>();
        for (int i = 0; i < properties.getRoutes().size(); i++) {
            routes.add(route(properties.getRoutes().get(i), properties, P + "routes[" + i + "]."));
        }
        return routes;
    }

    /** The policy of a route that sets nothing itself. */
    static IdempotencyPolicy defaultPolicy(IdempotencyProperties properties) {
        return policy(
                properties.getLease(),
                properties.getRetention(),
                properties.getInFlight(),
                properties.getKeepAlive(),
                P);
    }

    /** A route; what it does not set comes from the top level of {@code defaults}. */
    static IdempotentRoute route(Route route, IdempotencyProperties defaults, String prefix) {
        String path = route.getPath();
        if (path == null || path.isBlank()) {
            throw new IllegalArgumentException(prefix + "path is required (a path template such as /v1/charges)");
        }
        String method = route.getMethod();
        if (method == null || method.isBlank()) {
            throw new IllegalArgumentException(prefix + "method must not be empty");
        }
        InFlight own = route.getInFlight();
        InFlight base = defaults.getInFlight();
        InFlight inFlight = new InFlight();
        inFlight.setPolicy(own.getPolicy() != null ? own.getPolicy() : base.getPolicy());
        inFlight.setRetryAfter(own.getRetryAfter() != null ? own.getRetryAfter() : base.getRetryAfter());
        inFlight.setMaxWait(own.getMaxWait() != null ? own.getMaxWait() : base.getMaxWait());
        KeepAliveSettings ownKeepAlive = route.getKeepAlive();
        KeepAliveSettings baseKeepAlive = defaults.getKeepAlive();
        KeepAliveSettings keepAlive = new KeepAliveSettings();
        keepAlive.setEnabled(Objects.requireNonNullElse(ownKeepAlive.getEnabled(), baseKeepAlive.getEnabled()));
        keepAlive.setMaxHold(Objects.requireNonNullElse(ownKeepAlive.getMaxHold(), baseKeepAlive.getMaxHold()));
        IdempotencyPolicy policy = policy(
                Objects.requireNonNullElse(route.getLease(), defaults.getLease()),
                Objects.requireNonNullElse(route.getRetention(), defaults.getRetention()),
                inFlight,
                keepAlive,
                prefix);
        try {
            return IdempotentRoute.builder(method.strip().toUpperCase(Locale.ROOT), path.strip())
                    .keyRequired(route.isKeyRequired())
                    .recordServerErrors(route.isRecordServerErrors())
                    .policy(policy)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    unqualified(prefix) + " (" + method + " " + path + "): " + e.getMessage(), e);
        }
    }

    private static IdempotencyPolicy policy(
            Duration lease, Duration retention, InFlight inFlight, KeepAliveSettings keepAlive, String prefix) {
        if (lease.toMillis() < 1) {
            throw new IllegalArgumentException(prefix + "lease must be at least 1ms (was " + format(lease) + ")");
        }
        if (retention.compareTo(lease) <= 0) {
            throw new IllegalArgumentException(
                    prefix + "retention (" + format(retention) + ") must be longer than the lease (" + format(lease)
                            + "): a finished request is replayed for the retention, and only the lease may be short");
        }
        if (retention.compareTo(IdempotencyPolicy.MAX_RETENTION) > 0) {
            throw new IllegalArgumentException(prefix + "retention must be at most "
                    + format(IdempotencyPolicy.MAX_RETENTION) + " (was " + format(retention) + ")");
        }
        return IdempotencyPolicy.custom()
                .lease(lease)
                .retention(retention)
                .inFlight(inFlightPolicy(inFlight, prefix + "in-flight."))
                .keepAlive(keepAlive(keepAlive, lease, prefix + "keep-alive."))
                .build();
    }

    private static KeepAlive keepAlive(KeepAliveSettings settings, Duration lease, String prefix) {
        Duration maxHold = settings.getMaxHold();
        if (maxHold == null || maxHold.toMillis() < 1) {
            throw new IllegalArgumentException(prefix + "max-hold must be at least 1ms (was "
                    + (maxHold == null ? "unset" : format(maxHold)) + ")");
        }
        if (!Boolean.TRUE.equals(settings.getEnabled())) {
            return KeepAlive.disabled();
        }
        if (maxHold.compareTo(lease) < 0) {
            throw new IllegalArgumentException(prefix + "max-hold (" + format(maxHold)
                    + ") must be at least the lease (" + format(lease) + "): the keep-alive holds a key for at most "
                    + "max-hold; raise it, or set " + prefix + "enabled=false");
        }
        return KeepAlive.upTo(maxHold);
    }

    private static InFlightPolicy inFlightPolicy(InFlight inFlight, String prefix) {
        IdempotencyProperties.InFlightMode mode = inFlight.getPolicy();
        if (mode == null) {
            throw new IllegalArgumentException(prefix + "policy must be reject or wait");
        }
        return switch (mode) {
            case REJECT -> {
                Duration retryAfter = inFlight.getRetryAfter();
                if (retryAfter == null || retryAfter.isNegative()) {
                    throw new IllegalArgumentException(prefix + "retry-after must not be negative (was "
                            + (retryAfter == null ? "unset" : format(retryAfter)) + ")");
                }
                yield InFlightPolicy.reject(retryAfter);
            }
            case WAIT -> {
                Duration maxWait = inFlight.getMaxWait();
                if (maxWait == null
                        || maxWait.isNegative()
                        || maxWait.isZero()
                        || maxWait.compareTo(IdempotencyPolicy.MAX_WAIT) > 0) {
                    throw new IllegalArgumentException(prefix + "max-wait must be more than 0 and at most "
                            + format(IdempotencyPolicy.MAX_WAIT) + " (was "
                            + (maxWait == null ? "unset" : format(maxWait))
                            + ")");
                }
                yield InFlightPolicy.waitUpTo(maxWait);
            }
        };
    }

    private static void routes(List<String> problems, IdempotencyProperties properties) {
        IdempotencyProperties defaults = properties;
        try {
            defaultPolicy(properties);
        } catch (IllegalArgumentException e) {
            defaults = new IdempotencyProperties(); // already reported; still check what the routes set themselves
        }
        Map<String, Integer> seen = new HashMap<>();
        List<Route> routes = properties.getRoutes();
        for (int i = 0; i < routes.size(); i++) {
            String prefix = P + "routes[" + i + "].";
            IdempotencyProperties base = defaults;
            int index = i;
            check(problems, () -> {
                IdempotentRoute route = route(routes.get(index), base, prefix);
                Integer first = seen.putIfAbsent(route.method() + " " + route.pathTemplate(), index);
                if (first != null) {
                    throw new IllegalArgumentException(unqualified(prefix) + " repeats " + P + "routes[" + first + "] ("
                            + route.method() + " " + route.pathTemplate() + ")");
                }
                return route;
            });
        }
    }

    private static void tenant(List<String> problems, Tenant tenant) {
        String prefix = P + "tenant.";
        boolean hasKeys = !tenant.getApiKeys().isEmpty();
        String header = tenant.getHeader();
        boolean hasHeader = header != null && !header.isBlank();
        switch (tenant.getMode()) {
            case PRINCIPAL -> {}
            case API_KEYS -> {
                if (!hasKeys) {
                    problems.add(prefix + "api-keys must map at least one API key to a tenant when " + prefix
                            + "mode=api-keys (e.g. " + prefix + "api-keys[sk_live_abc]=acme)");
                }
                tenant.getApiKeys().forEach((key, id) -> {
                    if (key.isBlank() || id == null || id.isBlank()) {
                        problems.add(prefix + "api-keys: API keys and tenants must not be blank");
                    }
                });
            }
            case TRUSTED_HEADER -> {
                if (!hasHeader) {
                    problems.add(prefix + "header must name the header your gateway sets when " + prefix
                            + "mode=trusted-header");
                } else {
                    headerNames(problems, List.of(header), "tenant.header");
                }
            }
        }
        if (hasKeys && tenant.getMode() != IdempotencyProperties.TenantMode.API_KEYS) {
            problems.add(prefix + "api-keys is set but " + prefix + "mode is " + mode(tenant) + ": set " + prefix
                    + "mode=api-keys to use them");
        }
        if (hasHeader && tenant.getMode() != IdempotencyProperties.TenantMode.TRUSTED_HEADER) {
            problems.add(prefix + "header is set but " + prefix + "mode is " + mode(tenant) + ": set " + prefix
                    + "mode=trusted-header (only behind a gateway that overwrites the header)");
        }
        if (tenant.getChallenge() == null || tenant.getChallenge().isBlank()) {
            problems.add(prefix + "challenge must not be blank");
        }
    }

    private static String mode(Tenant tenant) {
        return tenant.getMode().name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private static void store(List<String> problems, IdempotencyProperties properties) {
        switch (properties.getStore()) {
            case MEMORY -> {
                if (properties.getMemory().getMaxEntries() <= 0) {
                    problems.add(P + "memory.max-entries must be positive (was "
                            + properties.getMemory().getMaxEntries() + ")");
                }
            }
            case REDIS -> {
                if (!present(REDIS_STORE_CLASS)) {
                    problems.add(P + "store=redis needs the module dev.exactly:idempotency-redis on the class path");
                    return;
                }
                String uri = properties.getRedis().getUri();
                if ((uri == null || uri.isBlank()) && !present(DataRedisConnections.DETAILS_CLASS)) {
                    problems.add(redisUriMissing());
                }
                check(problems, () -> RedisStores.config(properties.getRedis()));
            }
            case POSTGRES -> {
                if (!present(POSTGRES_STORE_CLASS)) {
                    problems.add(
                            P + "store=postgres needs the module dev.exactly:idempotency-postgres on the class path");
                    return;
                }
                check(problems, () -> PostgresStores.config(properties.getPostgres()));
                IdempotencyProperties.Purge purge = properties.getPostgres().getPurge();
                positive(problems, purge.getInterval(), "postgres.purge.interval");
                if (purge.getBatchSize() < 1 || purge.getBatchSize() > MAX_PURGE_BATCH) {
                    problems.add(P + "postgres.purge.batch-size must be between 1 and " + MAX_PURGE_BATCH + " (was "
                            + purge.getBatchSize() + ")");
                }
            }
        }
    }

    /** The problem of {@code store=redis} with neither {@code redis.uri} nor Spring Boot's Redis support. */
    static String redisUriMissing() {
        return P + "store=redis needs " + P + "redis.uri (e.g. redis://localhost:6379, or "
                + "redis-cluster://host1:7000,host2:7001 for Cluster), or Spring Boot's Redis connection: add "
                + "org.springframework.boot:spring-boot-starter-data-redis and set spring.data.redis.* (or let "
                + "@ServiceConnection or Docker Compose support set it)";
    }

    /** A duration as it is written in properties: 1500ms, 30s, 5m, 24h, 7d. */
    static String format(Duration duration) {
        if (duration.toNanosPart() % 1_000_000 != 0) {
            return duration.toNanos() + "ns";
        }
        if (duration.toMillisPart() != 0 || duration.isZero()) {
            return duration.isZero() ? "0s" : duration.toMillis() + "ms";
        }
        long seconds = duration.toSeconds();
        if (seconds % 86_400 == 0) {
            return seconds / 86_400 + "d";
        }
        if (seconds % 3_600 == 0) {
            return seconds / 3_600 + "h";
        }
        return seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
    }

    /** {@code exactly.idempotency.routes[0].} without its trailing dot. */
    private static String unqualified(String prefix) {
        return prefix.substring(0, prefix.length() - 1);
    }

    static boolean present(String className) {
        return ClassUtils.isPresent(className, PropertiesReader.class.getClassLoader());
    }

    private static void positive(List<String> problems, Duration duration, String name) {
        if (duration.isNegative() || duration.isZero()) {
            problems.add(P + name + " must be positive (was " + format(duration) + ")");
        }
    }

    private static void notNegative(List<String> problems, Duration duration, String name) {
        if (duration.isNegative()) {
            problems.add(P + name + " must not be negative (was " + format(duration) + ")");
        }
    }

    private static void size(List<String> problems, DataSize size, long min, String name) {
        if (size.toBytes() < min || size.toBytes() > Integer.MAX_VALUE) {
            problems.add(P + name + " must be between " + min + "B and " + Integer.MAX_VALUE + "B (was " + size + ")");
        }
    }

    private static void keyHeaders(List<String> problems, IdempotencyProperties properties) {
        String keyHeader = properties.getKeyHeader();
        if (keyHeader == null || keyHeader.isBlank()) {
            problems.add(P + "key-header must name the request header that carries the key");
            return;
        }
        headerNames(problems, List.of(keyHeader), "key-header");
        headerNames(problems, properties.getKeyHeaderAliases(), "key-header-aliases");
        for (String alias : properties.getKeyHeaderAliases()) {
            if (alias != null && alias.strip().equalsIgnoreCase(keyHeader.strip())) {
                problems.add(P + "key-header-aliases repeats the key header " + keyHeader);
            }
        }
    }

    private static void headerNames(List<String> problems, List<String> names, String property) {
        for (String name : names) {
            if (name == null || name.isBlank() || !name.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != ':')) {
                problems.add(P + property + ": not a header name: '" + name + "'");
            }
        }
    }

    /** Runs a conversion, recording its {@link IllegalArgumentException} as a problem. */
    private static void check(List<String> problems, Supplier<?> conversion) {
        try {
            Object unused = conversion.get(); // only whether it converts
        } catch (IllegalArgumentException e) {
            String message = Objects.requireNonNullElse(e.getMessage(), e.toString());
            problems.add(message.startsWith(P) ? message : P.substring(0, P.length() - 1) + ": " + message);
        }
    }
}
