package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The {@code exactly.idempotency.*} properties. Bound once at startup and checked as a whole right
 * after binding ({@link #afterPropertiesSet()}): a bad configuration fails the application's startup
 * with one message listing every problem, never the first request. The auto-configuration turns them
 * into immutable {@link dev.exactly.idempotency.servlet.IdempotentRoute}s and store settings.
 *
 * <pre>
 * exactly.idempotency.store=redis
 * exactly.idempotency.redis.uri=redis://localhost:6379
 * exactly.idempotency.routes[0].path=/v1/charges
 * exactly.idempotency.routes[1].method=POST
 * exactly.idempotency.routes[1].path=/v1/charges/{id}/refunds
 * exactly.idempotency.routes[1].in-flight.policy=wait
 * exactly.idempotency.tenant.mode=api-keys
 * exactly.idempotency.tenant.api-keys[sk_live_abc]=acme
 * </pre>
 */
@ConfigurationProperties(IdempotencyProperties.PREFIX)
public class IdempotencyProperties implements InitializingBean {
    /** The prefix of every property. */
    public static final String PREFIX = "exactly.idempotency";

    /** Whether the idempotency filter is configured at all. */
    private boolean enabled = true;

    /** Where records live: memory (this process only), redis (hot tier, shared) or postgres (durable). */
    private StoreType store = StoreType.MEMORY;

    /**
     * Default lease of a route: how long a request's key stays held after its last renewal, i.e. how soon
     * a retry may take the key over once its owner died or stalled. Renewed every third of it while the
     * request runs (keep-alive).
     */
    private Duration lease = Duration.ofSeconds(10);

    /** Default retention of a route: how long a finished request is replayed. Must be longer than the lease. */
    private Duration retention = Duration.ofHours(24);

    /** Default behaviour of a route when a request finds its key still in flight. */
    private final InFlight inFlight = InFlight.defaults();

    /** Default automatic renewal of a running request's lease. */
    private final KeepAliveSettings keepAlive = KeepAliveSettings.defaults();

    /**
     * How often a waiting request re-reads the store in case a wake-up was lost; the store's push is
     * the normal wake-up.
     */
    private Duration pollInterval = Duration.ofSeconds(1);

    /** The request header that carries the key. */
    private String keyHeader = "Idempotency-Key";

    /**
     * Other request headers accepted for the key (empty: none); a request that sends several must name the
     * same key in all.
     */
    private List<String> keyHeaderAliases = new ArrayList<>(List.of("X-Idempotency-Key"));

    /** Largest request body on a guarded route; larger bodies are refused with 413. */
    private DataSize maxRequestBodySize = DataSize.ofMegabytes(1);

    /**
     * Deepest nesting of arrays and objects in a JSON body on a guarded route (1-1000); deeper bodies are
     * refused with 400 json-too-deep before anything parses them.
     */
    private int maxJsonDepth = Fingerprinter.DEFAULT_MAX_JSON_DEPTH;

    /**
     * Largest response body stored for replay (at least 1KB). A larger body is streamed to the first
     * caller and replayed as a response-not-stored problem; the request never runs twice.
     */
    private DataSize maxStoredResponseSize = DataSize.ofMegabytes(1);

    /**
     * Response headers stored and replayed on top of Content-Type, Content-Language, Location, ETag,
     * Cache-Control and Link. Credential headers (Set-Cookie, Authorization, ...) are never replayed.
     */
    private List<String> replayHeaders = new ArrayList<>();

    /** Headers that carry credentials in this application: never stored or replayed, even if allow-listed. */
    private List<String> credentialHeaders = new ArrayList<>();

    /** Retry-After of the 503 answered when the store is unavailable. */
    private Duration storeUnavailableRetryAfter = Duration.ofSeconds(2);

    /**
     * What a guarded request does when the store fails before its handler was called: refuse (503
     * idempotency-store-unavailable, the handler not called) or pass-through (the handler called unguarded,
     * and for store-unavailable-retry-after the store not tried; only for handlers that guard their
     * effects durably themselves, or a retry runs again).
     */
    private StoreUnavailableMode whenStoreUnavailable = StoreUnavailableMode.REFUSE;

    /**
     * Order of the filter registration. It must run after the filter that authenticates the caller
     * (Spring Security's chain is at -100) when the tenant comes from the principal.
     */
    private int filterOrder = 0;

    /**
     * On Tomcat: answer {@code Expect: 100-continue} only when the request's body is read (Tomcat's
     * {@code continueResponseTiming=onRead}) instead of as soon as its headers are parsed, so that a request the
     * filter refuses on its headers (no or an invalid key, no tenant, a declared body over the limit) is answered
     * before the client was invited to send a body nobody reads. Set by the starter only where the connector
     * still has Tomcat's default; false leaves the connector as it is.
     */
    private boolean continueOnRead = true;

    /** The guarded routes, matched in this order; requests that match none pass through untouched. */
    private List<Route> routes = new ArrayList<>();

    /** Where the tenant of a request comes from. */
    private final Tenant tenant = new Tenant();

    /** Settings of the Redis store (store=redis). */
    private final Redis redis = new Redis();

    /** Settings of the PostgreSQL store (store=postgres), which uses the application's DataSource. */
    private final Postgres postgres = new Postgres();

    /** Settings of the in-memory store (store=memory). */
    private final Memory memory = new Memory();

    /** Micrometer metrics. */
    private final Metrics metrics = new Metrics();

    /** Micrometer Observation of each guarded execution. */
    private final Observation observation = new Observation();

    /**
     * Checks the whole configuration; called by the container right after binding.
     *
     * @throws InvalidIdempotencyPropertiesException listing every problem found
     */
    @Override
    public void afterPropertiesSet() {
        List<String> problems = PropertiesReader.problems(this);
        if (!problems.isEmpty()) {
            throw new InvalidIdempotencyPropertiesException(problems);
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isContinueOnRead() {
        return continueOnRead;
    }

    public void setContinueOnRead(boolean continueOnRead) {
        this.continueOnRead = continueOnRead;
    }

    public StoreType getStore() {
        return store;
    }

    public void setStore(StoreType store) {
        this.store = store;
    }

    public Duration getLease() {
        return lease;
    }

    public void setLease(Duration lease) {
        this.lease = lease;
    }

    public Duration getRetention() {
        return retention;
    }

    public void setRetention(Duration retention) {
        this.retention = retention;
    }

    public InFlight getInFlight() {
        return inFlight;
    }

    public KeepAliveSettings getKeepAlive() {
        return keepAlive;
    }

    public Duration getPollInterval() {
        return pollInterval;
    }

    public void setPollInterval(Duration pollInterval) {
        this.pollInterval = pollInterval;
    }

    public String getKeyHeader() {
        return keyHeader;
    }

    public void setKeyHeader(String keyHeader) {
        this.keyHeader = keyHeader;
    }

    public List<String> getKeyHeaderAliases() {
        return keyHeaderAliases;
    }

    public void setKeyHeaderAliases(List<String> keyHeaderAliases) {
        this.keyHeaderAliases = keyHeaderAliases;
    }

    public DataSize getMaxRequestBodySize() {
        return maxRequestBodySize;
    }

    public void setMaxRequestBodySize(DataSize maxRequestBodySize) {
        this.maxRequestBodySize = maxRequestBodySize;
    }

    public int getMaxJsonDepth() {
        return maxJsonDepth;
    }

    public void setMaxJsonDepth(int maxJsonDepth) {
        this.maxJsonDepth = maxJsonDepth;
    }

    public DataSize getMaxStoredResponseSize() {
        return maxStoredResponseSize;
    }

    public void setMaxStoredResponseSize(DataSize maxStoredResponseSize) {
        this.maxStoredResponseSize = maxStoredResponseSize;
    }

    public List<String> getReplayHeaders() {
        return replayHeaders;
    }

    public void setReplayHeaders(List<String> replayHeaders) {
        this.replayHeaders = replayHeaders;
    }

    public List<String> getCredentialHeaders() {
        return credentialHeaders;
    }

    public void setCredentialHeaders(List<String> credentialHeaders) {
        this.credentialHeaders = credentialHeaders;
    }

    public Duration getStoreUnavailableRetryAfter() {
        return storeUnavailableRetryAfter;
    }

    public void setStoreUnavailableRetryAfter(Duration storeUnavailableRetryAfter) {
        this.storeUnavailableRetryAfter = storeUnavailableRetryAfter;
    }

    public StoreUnavailableMode getWhenStoreUnavailable() {
        return whenStoreUnavailable;
    }

    public void setWhenStoreUnavailable(StoreUnavailableMode whenStoreUnavailable) {
        this.whenStoreUnavailable = whenStoreUnavailable;
    }

    public int getFilterOrder() {
        return filterOrder;
    }

    public void setFilterOrder(int filterOrder) {
        this.filterOrder = filterOrder;
    }

    public List<Route> getRoutes() {
        return routes;
    }

    public void setRoutes(List<Route> routes) {
        this.routes = routes;
    }

    public Tenant getTenant() {
        return tenant;
    }

    public Redis getRedis() {
        return redis;
    }

    public Postgres getPostgres() {
        return postgres;
    }

    public Memory getMemory() {
        return memory;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    public Observation getObservation() {
        return observation;
    }

    /** Which {@link dev.exactly.idempotency.spi.IdempotencyStore} the auto-configuration creates. */
    public enum StoreType {
        /** {@link InMemoryIdempotencyStore}: one process, nothing shared, nothing survives a restart. */
        MEMORY,
        /** The Redis store (module idempotency-redis), standalone or Cluster. */
        REDIS,
        /** The PostgreSQL store (module idempotency-postgres) on the application's DataSource. */
        POSTGRES
    }

    /** What a guarded request does when the store fails before its handler was called. */
    public enum StoreUnavailableMode {
        /** 503 idempotency-store-unavailable with Retry-After; the handler is not called (fail closed). */
        REFUSE,
        /** The handler is called unguarded: for handlers that guard their effects durably themselves. */
        PASS_THROUGH
    }

    /** What a request does when its key is still being processed by another request. */
    public enum InFlightMode {
        /** Answer 409 at once, with Retry-After. */
        REJECT,
        /** Wait (woken by the store) up to max-wait for the other request, then replay its response. */
        WAIT
    }

    /** Where the tenant, part of every key's scope, comes from. */
    public enum TenantMode {
        /** The authenticated principal's name (e.g. set by Spring Security). */
        PRINCIPAL,
        /** {@code Authorization: Bearer <api key>}, mapped to a tenant by tenant.api-keys. */
        API_KEYS,
        /** A header set by a trusted gateway (tenant.header); only behind a gateway that overwrites it. */
        TRUSTED_HEADER
    }

    /**
     * In-flight behaviour. At the top level every setting has a default; on a route an unset value is
     * taken from the top level.
     */
    public static class InFlight {
        /** reject (409 with Retry-After) or wait (bounded wait, then the replay). */
        private @Nullable InFlightMode policy;

        /** Retry-After of the 409 under the reject policy (at least one second). */
        private @Nullable Duration retryAfter;

        /** The bound on a wait under the wait policy (at most 60s); then 409. */
        private @Nullable Duration maxWait;

        static InFlight defaults() {
            InFlight defaults = new InFlight();
            defaults.policy = InFlightMode.REJECT;
            defaults.retryAfter = Duration.ofSeconds(1);
            defaults.maxWait = Duration.ofSeconds(5);
            return defaults;
        }

        public @Nullable InFlightMode getPolicy() {
            return policy;
        }

        public void setPolicy(@Nullable InFlightMode policy) {
            this.policy = policy;
        }

        public @Nullable Duration getRetryAfter() {
            return retryAfter;
        }

        public void setRetryAfter(@Nullable Duration retryAfter) {
            this.retryAfter = retryAfter;
        }

        public @Nullable Duration getMaxWait() {
            return maxWait;
        }

        public void setMaxWait(@Nullable Duration maxWait) {
            this.maxWait = maxWait;
        }
    }

    /**
     * Automatic renewal of a running request's lease. At the top level every setting has a default; on a
     * route an unset value is taken from the top level.
     */
    public static class KeepAliveSettings {
        /** Whether the engine renews a running request's lease every third of the lease. */
        private @Nullable Boolean enabled;

        /**
         * The longest a request holds its key through renewals, from its claim (at least the lease); past
         * it the lease runs out and a retry may take the key over while the request still runs.
         */
        private @Nullable Duration maxHold;

        static KeepAliveSettings defaults() {
            KeepAliveSettings defaults = new KeepAliveSettings();
            defaults.enabled = Boolean.TRUE;
            defaults.maxHold = dev.exactly.idempotency.KeepAlive.DEFAULT_MAX_HOLD;
            return defaults;
        }

        public @Nullable Boolean getEnabled() {
            return enabled;
        }

        public void setEnabled(@Nullable Boolean enabled) {
            this.enabled = enabled;
        }

        public @Nullable Duration getMaxHold() {
            return maxHold;
        }

        public void setMaxHold(@Nullable Duration maxHold) {
            this.maxHold = maxHold;
        }
    }

    /** One guarded route. Unset lease, retention, in-flight and keep-alive settings come from the top level. */
    public static class Route {
        /** HTTP method (upper case). */
        private String method = "POST";

        /**
         * Context-relative path template: literal segments and {variable} segments, e.g.
         * /v1/charges/{id}/refunds. The template, not the concrete path, is part of the key's scope.
         */
        private @Nullable String path;

        /** Whether a request without a key is refused with 400; if false it passes through unguarded. */
        private boolean keyRequired = true;

        /** Lease of this route; default: exactly.idempotency.lease. */
        private @Nullable Duration lease;

        /** Retention of this route; default: exactly.idempotency.retention. */
        private @Nullable Duration retention;

        /** In-flight behaviour of this route; unset values come from exactly.idempotency.in-flight. */
        private final InFlight inFlight = new InFlight();

        /** Keep-alive of this route; unset values come from exactly.idempotency.keep-alive. */
        private final KeepAliveSettings keepAlive = new KeepAliveSettings();

        /**
         * Whether a 5xx answer is recorded and replayed (Stripe's behaviour) instead of releasing the key
         * so that a retry runs again.
         */
        private boolean recordServerErrors;

        public String getMethod() {
            return method;
        }

        public void setMethod(String method) {
            this.method = method;
        }

        public @Nullable String getPath() {
            return path;
        }

        public void setPath(@Nullable String path) {
            this.path = path;
        }

        public boolean isKeyRequired() {
            return keyRequired;
        }

        public void setKeyRequired(boolean keyRequired) {
            this.keyRequired = keyRequired;
        }

        public @Nullable Duration getLease() {
            return lease;
        }

        public void setLease(@Nullable Duration lease) {
            this.lease = lease;
        }

        public @Nullable Duration getRetention() {
            return retention;
        }

        public void setRetention(@Nullable Duration retention) {
            this.retention = retention;
        }

        public InFlight getInFlight() {
            return inFlight;
        }

        public KeepAliveSettings getKeepAlive() {
            return keepAlive;
        }

        public boolean isRecordServerErrors() {
            return recordServerErrors;
        }

        public void setRecordServerErrors(boolean recordServerErrors) {
            this.recordServerErrors = recordServerErrors;
        }
    }

    /** Tenant resolution. */
    public static class Tenant {
        /** principal, api-keys or trusted-header. */
        private TenantMode mode = TenantMode.PRINCIPAL;

        /**
         * API key to tenant id, for mode api-keys (the key is sent as Authorization: Bearer key). Use the
         * bracket form for keys with characters other than letters, digits and '-':
         * api-keys[sk_live_abc]=acme. Keys are held only as SHA-256 digests.
         */
        private Map<String, String> apiKeys = new LinkedHashMap<>();

        /** The header a trusted gateway sets (overwriting any client value), for mode trusted-header. */
        private @Nullable String header;

        /** WWW-Authenticate challenge of the 401 answered when no tenant is found. */
        private String challenge = "Bearer";

        public TenantMode getMode() {
            return mode;
        }

        public void setMode(TenantMode mode) {
            this.mode = mode;
        }

        public Map<String, String> getApiKeys() {
            return apiKeys;
        }

        public void setApiKeys(Map<String, String> apiKeys) {
            this.apiKeys = apiKeys;
        }

        public @Nullable String getHeader() {
            return header;
        }

        public void setHeader(@Nullable String header) {
            this.header = header;
        }

        public String getChallenge() {
            return challenge;
        }

        public void setChallenge(String challenge) {
            this.challenge = challenge;
        }
    }

    /** The Redis store. */
    public static class Redis {
        /**
         * Connection string: redis://host:6379 (or rediss://, redis-sentinel://) for a standalone server,
         * redis-cluster://host:7000,host:7001 for Cluster. Unset, store=redis uses Spring Boot's Redis connection
         * details (spring.data.redis.*, or what @ServiceConnection and Docker Compose support register).
         */
        private @Nullable String uri;

        /** Prefix of every key and of the change channel; no '{' or '}'. */
        private String keyPrefix = "exactly:idem:";

        /** How long one command may take before the store counts as unavailable (503). */
        private Duration commandTimeout = Duration.ofSeconds(2);

        /** How long opening a connection may take. */
        private Duration connectTimeout = Duration.ofSeconds(2);

        /**
         * Whether a Redis that evicts keys when its memory is full (maxmemory with a maxmemory-policy other than
         * noeviction) is accepted. Off: the store refuses it (503), since it may drop a finished record and
         * its retry would run again; only for a hot tier in front of a durable store that decides.
         */
        private boolean evictionAllowed;

        public @Nullable String getUri() {
            return uri;
        }

        public void setUri(@Nullable String uri) {
            this.uri = uri;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public Duration getCommandTimeout() {
            return commandTimeout;
        }

        public void setCommandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public boolean isEvictionAllowed() {
            return evictionAllowed;
        }

        public void setEvictionAllowed(boolean evictionAllowed) {
            this.evictionAllowed = evictionAllowed;
        }
    }

    /** The PostgreSQL store. */
    public static class Postgres {
        /** Whether to create the store's table at startup if it is missing (idempotent, safe with several instances). */
        private boolean migrate;

        /** The table (unqualified, resolved through the connection's search_path). */
        private String tableName = "idempotency_records";

        /** The LISTEN/NOTIFY channel that wakes waiting requests. */
        private String notificationChannel = "exactly_idempotency";

        /** Timeout of every statement the store runs, in whole seconds. */
        private Duration statementTimeout = Duration.ofSeconds(2);

        /**
         * Claims of fresh keys (and, counted apart, completions) run at once before the next ones queue and share
         * one statement and commit; 0 gives every write its own statement.
         */
        private int sharedStatementLanes = 4;

        /** The most claims or completions one shared statement carries. */
        private int maxSharedWrites = 32;

        /** The scheduled purge of expired records. */
        private final Purge purge = new Purge();

        public boolean isMigrate() {
            return migrate;
        }

        public void setMigrate(boolean migrate) {
            this.migrate = migrate;
        }

        public String getTableName() {
            return tableName;
        }

        public void setTableName(String tableName) {
            this.tableName = tableName;
        }

        public String getNotificationChannel() {
            return notificationChannel;
        }

        public void setNotificationChannel(String notificationChannel) {
            this.notificationChannel = notificationChannel;
        }

        public Duration getStatementTimeout() {
            return statementTimeout;
        }

        public void setStatementTimeout(Duration statementTimeout) {
            this.statementTimeout = statementTimeout;
        }

        public int getSharedStatementLanes() {
            return sharedStatementLanes;
        }

        public void setSharedStatementLanes(int sharedStatementLanes) {
            this.sharedStatementLanes = sharedStatementLanes;
        }

        public int getMaxSharedWrites() {
            return maxSharedWrites;
        }

        public void setMaxSharedWrites(int maxSharedWrites) {
            this.maxSharedWrites = maxSharedWrites;
        }

        public Purge getPurge() {
            return purge;
        }
    }

    /** The scheduled purge of the PostgreSQL store's expired records. */
    public static class Purge {
        /** Whether expired records are deleted on a schedule (store=postgres only). */
        private boolean enabled = true;

        /** The pause between two purges; the first runs one interval after the start. */
        private Duration interval = Duration.ofMinutes(10);

        /** The most rows one purge statement (and transaction) deletes; a purge runs batches until one is short. */
        private int batchSize = 1000;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        public int getBatchSize() {
            return batchSize;
        }

        public void setBatchSize(int batchSize) {
            this.batchSize = batchSize;
        }
    }

    /** The in-memory store. */
    public static class Memory {
        /** Most records held (processing and finished). */
        private int maxEntries = 100_000;
        /**
         * What a full store does with a new key: refuse it (503) until records expire, or evict finished
         * records oldest first (only when a durable store keeps every outcome behind this one).
         */
        private InMemoryIdempotencyStore.WhenFull whenFull = InMemoryIdempotencyStore.WhenFull.REFUSE;

        public int getMaxEntries() {
            return maxEntries;
        }

        public void setMaxEntries(int maxEntries) {
            this.maxEntries = maxEntries;
        }

        public InMemoryIdempotencyStore.WhenFull getWhenFull() {
            return whenFull;
        }

        public void setWhenFull(InMemoryIdempotencyStore.WhenFull whenFull) {
            this.whenFull = whenFull;
        }
    }

    /** Micrometer Observation. */
    public static class Observation {
        /**
         * Whether each guarded execution is an Observation named exactly.idempotency (a span with tracing, a
         * timer with metrics), when an ObservationRegistry is present.
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Micrometer metrics. */
    public static class Metrics {
        /** Whether the exactly.idempotency.* meters are registered (when Micrometer is present). */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
