package dev.exactly.benchmarks.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresStoreConfig;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.SystemProperties;
import dev.exactly.testing.TestPostgres;
import dev.exactly.testing.TestRedis;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * One store ready to benchmark: the store, an engine on it, the raw baseline on the same server and
 * client stack, and everything to undo afterwards (a started cluster is stopped, Redis keys of the run
 * are removed, a PostgreSQL schema is dropped).
 *
 * <p>Records of fresh keys are kept only briefly, so that a run of hundreds of thousands of keys does not
 * fill a shared Redis or the in-memory store's bound: Redis and PostgreSQL keep them 60 s (lease 30 s);
 * the in-memory store, which fails closed when full, 10 s (lease 5 s) within a bound of
 * {@value #MEMORY_MAX_ENTRIES} records (so it holds up to 400 000 guarded operations per second). The
 * retention changes how much is kept, not what one operation costs.
 */
public final class StoreFixture implements AutoCloseable {
    /** The in-memory store's bound in the benchmark. */
    public static final int MEMORY_MAX_ENTRIES = 4_000_000;

    private static final IdempotencyPolicy SERVER_POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30))
            .retention(Duration.ofSeconds(60))
            .build();
    private static final IdempotencyPolicy MEMORY_POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(5))
            .retention(Duration.ofSeconds(10))
            .build();

    /**
     * The PostgreSQL store's {@code sharedStatementLanes} ({@link PostgresStoreConfig}): the library's default
     * unless set; 0 gives every claim and completion its own statement, as the raw floor does.
     */
    public static final String PG_SHARED_LANES_PROPERTY = "exactly.bench.pgSharedLanes";

    /** How the raw Redis floors' clients flush: {@code lettuce} (its default) or {@code consolidated}. */
    public static final String RAW_FLUSHES_PROPERTY = "exactly.bench.rawFlushes";

    /**
     * The server binary the benchmarks start for Redis (standalone and Cluster nodes), e.g. a
     * {@code valkey-server} 8.1, whose {@code SET ... IFEQ} the store's completions use; unset: {@code
     * redis-server} from the PATH.
     */
    public static final String REDIS_SERVER_PROPERTY = "exactly.bench.redisServer";

    /**
     * Keys written to each Redis server (each Cluster node) of the benchmark's own before it is used
     * ({@link #ballast}); unset, the HTTP benchmark sizes them to the run; 0 writes none. The smoke test and the
     * store benchmarks write none.
     */
    public static final String REDIS_BALLAST_PROPERTY = "exactly.bench.redisBallast";
    /** The masters of the benchmarks' Redis Cluster. */
    public static final int CLUSTER_MASTERS = 3;
    /** The ballast outlives the longest run the HTTP benchmark starts ({@link RawBaseline#KEPT}). */
    private static final Duration KEPT_AFTER_RUN = RawBaseline.KEPT.plusHours(1);

    private static final int BALLAST_BATCH = 10_000;

    /** The binary of {@link #REDIS_SERVER_PROPERTY}, else {@code redis-server} from the PATH; null when neither. */
    public static @Nullable Path redisServerBinary() {
        String configured = System.getProperty(REDIS_SERVER_PROPERTY);
        if (configured == null || configured.isBlank()) {
            return TestRedis.redisServerOnPath();
        }
        Path binary = Path.of(configured);
        if (!Files.isExecutable(binary)) {
            throw new IllegalArgumentException(
                    "-D" + REDIS_SERVER_PROPERTY + "=" + configured + " is not an executable file");
        }
        return binary;
    }

    private static final ScopeKey CONNECT_CHECK_KEY = new ScopeKey("0".repeat(64));

    private final StoreKind kind;
    private final IdempotencyStore store;
    private final IdempotencyEngine engine;
    private final @Nullable RawBaseline raw;
    private final @Nullable RawBaseline fencedRaw;
    private final List<RedisURI> redisNodes;
    private final Deque<AutoCloseable> resources;

    private StoreFixture(
            StoreKind kind,
            IdempotencyStore store,
            @Nullable RawBaseline raw,
            @Nullable RawBaseline fencedRaw,
            List<RedisURI> redisNodes,
            Deque<AutoCloseable> resources) {
        this.kind = kind;
        this.store = store;
        this.engine = IdempotencyEngine.builder(store).build();
        this.raw = raw;
        this.fencedRaw = fencedRaw;
        this.redisNodes = List.copyOf(redisNodes);
        this.resources = resources;
        // connect now (Redis also subscribes), so that no measured operation pays for it
        store.find(CONNECT_CHECK_KEY);
    }

    /**
     * Opens a store of {@code kind}.
     *
     * @param connections the PostgreSQL pool size (one per benchmark thread)
     */
    public static StoreFixture open(StoreKind kind, int connections) {
        return open(kind, connections, 0);
    }

    /**
     * Opens a store of {@code kind}, writing {@code ballast} keys to each Redis server (Cluster node) of the
     * benchmark's own first ({@link #REDIS_BALLAST_PROPERTY}).
     *
     * @param connections the PostgreSQL pool size (one per benchmark thread)
     */
    public static StoreFixture open(StoreKind kind, int connections, int ballast) {
        Deque<AutoCloseable> resources = new ArrayDeque<>();
        try {
            return switch (kind) {
                case MEMORY ->
                    new StoreFixture(
                            kind,
                            InMemoryIdempotencyStore.create(InstantSource.system(), MEMORY_MAX_ENTRIES),
                            null,
                            null,
                            List.of(),
                            resources);
                case REDIS -> openRedis(kind, standaloneRedis(resources, ballast), null, resources);
                case REDIS_CLUSTER -> {
                    RedisCluster cluster = RedisCluster.start(CLUSTER_MASTERS);
                    resources.push(cluster);
                    ballast(cluster.seeds(), true, ballast * CLUSTER_MASTERS);
                    yield openRedis(kind, cluster.uri(), cluster, resources);
                }
                case POSTGRES -> openPostgres(connections, resources);
            };
        } catch (RuntimeException | Error e) {
            closeAll(resources, e);
            throw e;
        }
    }

    private static StoreFixture openRedis(
            StoreKind kind, String uri, @Nullable RedisCluster cluster, Deque<AutoCloseable> resources) {
        String prefix = "exactly:bench:" + runId() + ":";
        RedisStoreConfig config = RedisStoreConfig.custom().keyPrefix(prefix).build();
        RedisIdempotencyStore store = RedisIdempotencyStore.create(uri, config);
        resources.push(store);
        String rawPrefix = prefix + "raw:";
        RawBaseline raw;
        RawBaseline fenced = null;
        List<RedisURI> nodes;
        if (cluster != null) {
            nodes = cluster.seeds();
            ClientResources clientResources = rawClientResources();
            RedisClusterClient client = RedisClusterClient.create(clientResources, nodes);
            client.setOptions(ClusterClientOptions.builder()
                    .timeoutOptions(RedisRawBaseline.TIMEOUTS)
                    .build());
            StatefulRedisClusterConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
            raw = new RedisRawBaseline(connection.async(), rawPrefix, () -> {
                connection.close();
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
                clientResources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
            });
        } else {
            RedisURI node = RedisURI.create(uri);
            nodes = List.of(node);
            ClientResources clientResources = rawClientResources();
            RedisClient client = RedisClient.create(clientResources, node);
            client.setOptions(ClientOptions.builder()
                    .timeoutOptions(RedisRawBaseline.TIMEOUTS)
                    .build());
            StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
            raw = new RedisRawBaseline(connection.async(), rawPrefix, () -> {
                // a shared Redis keeps no benchmark keys: the store's and the baseline's share the prefix
                try (StatefulRedisConnection<String, String> text = client.connect()) {
                    unlinkAll(text.sync(), prefix);
                }
                connection.close();
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
                clientResources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
            });
            // the same connection, keys of its own; the plain floor's close ends both
            fenced = RedisRawBaseline.fenced(connection.async(), prefix + "fenced:", () -> {});
        }
        resources.push(raw);
        return new StoreFixture(kind, store, raw, fenced, nodes, resources);
    }

    /**
     * The resources of the raw floors' Lettuce clients: Lettuce's defaults, each command written and
     * flushed on its own, unless {@value #RAW_FLUSHES_PROPERTY} is {@code consolidated}, which gives the
     * floors the flush consolidation the store's own clients have
     * ({@link RedisIdempotencyStore#consolidatedFlushes()}): how much of a ratio that accounts for.
     */
    private static ClientResources rawClientResources() {
        String flushes = System.getProperty(RAW_FLUSHES_PROPERTY, "lettuce");
        return switch (flushes) {
            case "lettuce" -> ClientResources.create();
            case "consolidated" ->
                ClientResources.builder()
                        .nettyCustomizer(RedisIdempotencyStore.consolidatedFlushes())
                        .build();
            default ->
                throw new IllegalArgumentException(
                        RAW_FLUSHES_PROPERTY + " is lettuce or consolidated, not " + flushes);
        };
    }

    /**
     * A {@code redis-server} of the benchmark's own on a free loopback port when one is on the PATH (so
     * that no other client shares its CPU and its command statistics are the benchmark's alone), else
     * the test Redis.
     */
    private static String standaloneRedis(Deque<AutoCloseable> resources, int ballast) {
        Path binary = redisServerBinary();
        if (binary == null) {
            return TestRedis.uri();
        }
        RedisProcess server = RedisProcess.start(binary, TestRedis.freePort(), List.of());
        String uri = "redis://" + TestRedis.host() + ":" + server.port();
        // stopped with the fixture, or by the JVM's exit should the benchmark be ended early
        Thread stopAtExit = new Thread(server::stop, "redis-stop-" + server.port());
        Runtime.getRuntime().addShutdownHook(stopAtExit);
        resources.push(() -> {
            server.stop();
            deleteTree(server.dir());
            try {
                Runtime.getRuntime().removeShutdownHook(stopAtExit);
            } catch (IllegalStateException exiting) {
                // the hook runs or ran: the server is stopped either way
            }
        });
        ballast(List.of(RedisURI.create(uri)), false, ballast);
        return uri;
    }

    /**
     * Writes {@code keys} keys that expire after the run ({@code SET ballast:i b PX ...}, pipelined) to a server of
     * the benchmark's own (through a Cluster client when {@code cluster}, which spreads them over the nodes), so
     * that each server's table of keys, and its table of keys with a TTL, has doubled past its size at the
     * largest run before the first phase. A table that doubles during a phase moves every key to the new one
     * (incrementally, but seconds of the server's CPU at millions of keys): the phase then running, whichever
     * endpoint it is, ran at two thirds of its rate for a few seconds, and a guarded phase's round fell to 0.6-0.7
     * of its floor's.
     */
    static void ballast(List<RedisURI> nodes, boolean cluster, int keys) {
        if (keys <= 0) {
            return;
        }
        long start = System.nanoTime();
        AbstractRedisClient client = cluster ? RedisClusterClient.create(nodes) : RedisClient.create(nodes.getFirst());
        try (StatefulConnection<byte[], byte[]> connection = cluster
                ? ((RedisClusterClient) client).connect(ByteArrayCodec.INSTANCE)
                : ((RedisClient) client).connect(ByteArrayCodec.INSTANCE)) {
            RedisClusterAsyncCommands<byte[], byte[]> commands =
                    connection instanceof StatefulRedisClusterConnection<byte[], byte[]> c
                            ? c.async()
                            : ((StatefulRedisConnection<byte[], byte[]>) connection).async();
            connection.setAutoFlushCommands(false);
            byte[] value = {'b'};
            SetArgs expiring = SetArgs.Builder.px(KEPT_AFTER_RUN.toMillis());
            List<RedisFuture<String>> batch = new ArrayList<>(BALLAST_BATCH);
            for (int i = 0; i < keys; i++) {
                batch.add(commands.set(("ballast:" + i).getBytes(StandardCharsets.US_ASCII), value, expiring));
                if (batch.size() == BALLAST_BATCH || i == keys - 1) {
                    connection.flushCommands();
                    for (RedisFuture<String> reply : batch) {
                        reply.get(30, TimeUnit.SECONDS);
                    }
                    batch.clear();
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("could not write the ballast keys", e);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        System.out.printf(
                "ballast: %,d expiring keys written to %s in %d ms%n",
                keys, cluster ? "the Cluster" : "Redis", (System.nanoTime() - start) / 1_000_000);
    }

    private static StoreFixture openPostgres(int connections, Deque<AutoCloseable> resources) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(TestPostgres.freshSchema("bench"));
        config.setMaximumPoolSize(connections);
        config.setMinimumIdle(connections);
        config.setPoolName("bench-postgres");
        HikariDataSource pool = new HikariDataSource(config);
        resources.push(pool);
        String schema = currentSchema(pool);
        resources.push(() -> dropSchema(schema));
        PostgresIdempotencyStore.migrate(pool);
        int lanes = SystemProperties.integer(
                PG_SHARED_LANES_PROPERTY, PostgresStoreConfig.ofDefaults().sharedStatementLanes());
        PostgresIdempotencyStore store = PostgresIdempotencyStore.create(
                pool, PostgresStoreConfig.custom().sharedStatementLanes(lanes).build());
        resources.push(store);
        RawBaseline raw = PostgresRawBaseline.create(pool);
        resources.push(raw);
        return new StoreFixture(StoreKind.POSTGRES, store, raw, null, List.of(), resources);
    }

    public StoreKind kind() {
        return kind;
    }

    public IdempotencyStore store() {
        return store;
    }

    /** An engine with default settings on the store. */
    public IdempotencyEngine engine() {
        return engine;
    }

    /** The policy of fresh keys: short retention, see the class comment. */
    public IdempotencyPolicy freshKeyPolicy() {
        return kind == StoreKind.MEMORY ? MEMORY_POLICY : SERVER_POLICY;
    }

    /** The Redis nodes behind the store (one standalone server, or the Cluster's masters); empty for others. */
    public List<RedisURI> redisNodes() {
        return redisNodes;
    }

    /** The raw baseline on the same server. */
    public RawBaseline raw() {
        if (raw == null) {
            throw new IllegalStateException("the " + kind.id() + " store has no server, so no raw baseline");
        }
        return raw;
    }

    /**
     * The fenced floor on the same server (standalone Redis only): the claim, then a compare-and-set script
     * for the answer, see {@link RedisRawBaseline}.
     */
    public RawBaseline fencedRaw() {
        if (fencedRaw == null) {
            throw new IllegalStateException("the " + kind.id() + " store has no fenced raw baseline");
        }
        return fencedRaw;
    }

    @Override
    public void close() {
        closeAll(resources, null);
    }

    private static void closeAll(Deque<AutoCloseable> resources, @Nullable Throwable primary) {
        RuntimeException failure = null;
        while (!resources.isEmpty()) {
            try {
                resources.pop().close();
            } catch (Exception e) {
                if (primary != null) {
                    primary.addSuppressed(e);
                } else if (failure == null) {
                    failure = new IllegalStateException("could not release a benchmark resource", e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static void unlinkAll(RedisCommands<String, String> commands, String prefix) {
        ScanArgs match = ScanArgs.Builder.matches(prefix + "*").limit(1000);
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = commands.scan(cursor, match);
            if (!page.getKeys().isEmpty()) {
                commands.unlink(page.getKeys().toArray(String[]::new));
            }
            cursor = page;
        } while (!cursor.isFinished());
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    private static String currentSchema(DataSource pool) {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement();
                ResultSet row = s.executeQuery("SELECT current_schema()")) {
            row.next();
            return row.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the benchmark schema", e);
        }
    }

    private static void dropSchema(String schema) throws SQLException {
        try (Connection c = TestPostgres.dataSource().getConnection();
                Statement s = c.createStatement()) {
            // the name came from current_schema() of a schema TestPostgres created: [a-z0-9_] only
            s.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
        }
    }

    /** A short random id, so that runs never share keys. */
    static String runId() {
        byte[] bytes = new byte[4];
        ThreadLocalRandom.current().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
