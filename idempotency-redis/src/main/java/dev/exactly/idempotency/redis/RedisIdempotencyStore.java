package dev.exactly.idempotency.redis;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.redis.internal.HeaderCodec;
import dev.exactly.idempotency.redis.internal.LuaScript;
import dev.exactly.idempotency.redis.internal.RecordValue;
import dev.exactly.idempotency.redis.internal.RedisEndpoints;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spi.LocalWaiters;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * An {@link IdempotencyStore} on Redis, standalone or Cluster, through Lettuce.
 *
 * <h2>Layout</h2>
 * One Redis string per scope at {@code keyPrefix + "{" + scopeHash + "}:r"} (see
 * {@link RedisStoreConfig#recordKey}): status, times, owner, fingerprint and, once finished, the
 * response, packed into one value ({@code RecordValue} describes the bytes), so that a replay is one
 * {@code GET} inside the claim script and a completion one {@code SET}. Next to it, while some process
 * waits for the scope, a waiter marker ({@link RedisStoreConfig#waiterKey}). The braces are a Cluster
 * hash tag, so a scope's keys share one slot. All values go through a byte-array codec.
 *
 * <h2>Atomicity protocol</h2>
 * Every transition is <em>one</em> Lua script (resources {@code dev/exactly/idempotency/redis/*.lua}),
 * run with {@code EVALSHA} and re-sent with {@code EVAL} on {@code NOSCRIPT} (server restart,
 * {@code SCRIPT FLUSH}, a Cluster node that has not seen it yet). Redis runs a script without
 * interleaving any other command, so there is no read-then-write race. Each script reads the
 * server's clock with {@code TIME}: every process sees the same lease end, whatever its own clock says.
 * <ul>
 *   <li><b>claim.lua</b> — absent key: create a {@code PROCESSING} record owned by the caller's token
 *       (passed in, so that a claim whose answer was lost can be released by it) with a lease end of
 *       {@code now + lease}, and set the key's TTL to the retention in the same script (to the lease,
 *       should that be longer: a record never expires under a live lease); the answer is only the
 *       server time of the claim. Finished: return the value as it is ({@code Finished}): a replay costs
 *       one {@code GET}. Processing with a live lease: return it ({@code InFlight}). Processing with an
 *       expired lease and the same fingerprint: hand it to the new token with a new lease and a TTL of
 *       the retention from now ({@code Claimed}, takeover). Processing with a different fingerprint:
 *       return it unmodified.</li>
 *   <li><b>complete.lua</b> — only if {@code PROCESSING} and owned by the token presented: store the
 *       outcome and response, drop the lease, reset the TTL to the retention from now, and, if the
 *       scope's waiter marker exists, {@code PUBLISH} the scope hash on the change channel.</li>
 *   <li><b>release.lua</b> — only for the owner of a processing record: {@code DEL} it and, if the
 *       waiter marker exists, {@code PUBLISH}.</li>
 *   <li><b>renew.lua</b> — only for the owner of a processing record: lease end {@code = now + lease};
 *       if that is past the record's expiry, the expiry (in the value and the TTL) moves to the lease
 *       end.</li>
 * </ul>
 * The lease is in the value and the TTL is the retention (never "lock TTL = record TTL"): a finished
 * record outlives the lease, and an abandoned claim is still there, with its fingerprint, when a retry
 * comes to take it over. Writes by a stale owner return {@code false} and change nothing.
 * {@link #find} is one {@code GET}; expired records are gone by TTL.
 *
 * <h2>Change notification</h2>
 * complete and release publish the scope hash on one channel, {@link RedisStoreConfig#changesChannel()},
 * when somebody waits for the scope: {@link #subscribe} sets the scope's waiter marker (one {@code SET}
 * with a TTL, renewed while the wait lasts) before the waiter re-reads the record, and the scripts
 * publish only while the marker exists, so the common case (nobody waits) sends no message and no
 * instance receives one. Each store holds one pub/sub connection subscribed to the channel (for
 * Cluster, the Cluster pub/sub connection; a classic {@code PUBLISH} reaches every node) and wakes the
 * matching {@link LocalWaiters}. Whenever the subscription is (re-)established, for instance after a
 * reconnect during which messages may have been lost, every local waiter is woken to re-read.
 *
 * <h2>Failures and guarantees</h2>
 * Connections are opened on first use (a store can be built while Redis is down) and then re-established
 * by Lettuce. Any Lettuce connection, timeout or command error becomes a
 * {@link StoreUnavailableException} and the engine fails closed. Each command waits at most
 * {@link RedisStoreConfig#commandTimeout()}; after a failed connection attempt, further calls fail at
 * once for {@value #RECONNECT_BACKOFF_MILLIS} ms instead of queueing behind it. Redis is a <em>hot
 * tier</em>: replication is asynchronous, so a failover (or a primary restarting empty) can lose a claim
 * or a completion that was already acknowledged. Exactly-once for payments comes from the durable tier
 * (PostgreSQL) committing the outcome with a unique constraint on the scope; this store only makes
 * duplicates cheap to reject or coalesce.
 *
 * <p>Thread-safe. {@link #close()} closes the store's connections, and shuts the client down only if
 * the store created it ({@link #create(String)}).
 */
public final class RedisIdempotencyStore implements IdempotencyStore {
    /** How long calls fail at once after a failed connection attempt. */
    public static final long RECONNECT_BACKOFF_MILLIS = 500;

    private static final ByteArrayCodec CODEC = ByteArrayCodec.INSTANCE;
    /** How long a waiter marker lives unless the waiting subscription renews it. */
    public static final long WAITER_MARK_MILLIS = 600_000;

    private static final Duration CLUSTER_TOPOLOGY_REFRESH = Duration.ofSeconds(30);
    private static final byte[] COMPLETED = {'C'};
    private static final byte[] FAILED = {'F'};
    private static final byte[] WAITER_MARK = {'1'};
    private static final SetArgs WAITER_MARK_ARGS = SetArgs.Builder.px(WAITER_MARK_MILLIS);

    private final RedisStoreConfig config;
    private final String topology;
    private final Connector connector;
    private final Runnable shutdownClient;
    private final byte[] channel;
    private final LocalWaiters waiters = new LocalWaiters();
    private final ChangeListener listener = new ChangeListener();
    private final ReentrantLock connectLock = new ReentrantLock();
    private volatile @Nullable Connections connections;
    private volatile boolean closed;
    private @Nullable RedisException lastConnectFailure;
    private long lastConnectFailureNanos;

    private RedisIdempotencyStore(RedisStoreConfig config, String topology, Connector connector, Runnable shutdownClient) {
        this.config = Objects.requireNonNull(config, "config");
        this.topology = topology;
        this.connector = connector;
        this.shutdownClient = shutdownClient;
        this.channel = RecordValue.ascii(config.changesChannel());
    }

    /**
     * A store on a standalone (or Sentinel-managed) Redis. The client must have been created with a
     * {@link RedisURI}; it stays the caller's to shut down.
     */
    public static RedisIdempotencyStore standalone(RedisClient client, RedisStoreConfig config) {
        return new RedisIdempotencyStore(config, "standalone", standaloneConnector(client), () -> {});
    }

    /** A store on Redis Cluster. The client stays the caller's to shut down. */
    public static RedisIdempotencyStore cluster(RedisClusterClient client, RedisStoreConfig config) {
        return new RedisIdempotencyStore(config, "cluster", clusterConnector(client), () -> {});
    }

    /** {@link #create(String, RedisStoreConfig)} with {@link RedisStoreConfig#ofDefaults()}. */
    public static RedisIdempotencyStore create(String redisUri) {
        return create(redisUri, RedisStoreConfig.ofDefaults());
    }

    /**
     * A store with its own Lettuce client, which {@link #close()} shuts down. The connection string
     * selects the topology:
     * <ul>
     *   <li>{@code redis://host:6379} (or {@code rediss://}, {@code redis-socket://}, or
     *       {@code redis-sentinel://h1,h2?sentinelMasterId=name}, and any Lettuce URI options):
     *       standalone;</li>
     *   <li>{@code redis-cluster://[user:password@]host:7000,host:7001} (or {@code rediss-cluster://} for
     *       TLS): Cluster with these seed nodes, credentials and query options applying to each;</li>
     *   <li>{@code redis://host:7000,host:7001}, or a comma list of complete URIs
     *       ({@code redis://a:7000,redis://b:7001}): Cluster as well.</li>
     * </ul>
     * The client gets the config's connect and command timeouts; a Cluster client refreshes its
     * topology on redirects and reconnects (Lettuce's adaptive triggers) and every
     * 30 seconds. Nothing is connected until the first call.
     *
     * @throws IllegalArgumentException the connection string is not one of these forms
     */
    public static RedisIdempotencyStore create(String redisUri, RedisStoreConfig config) {
        Objects.requireNonNull(config, "config");
        RedisEndpoints endpoints = RedisEndpoints.parse(redisUri);
        return endpoints.cluster()
                ? createCluster(endpoints.uris(), config)
                : create(endpoints.uris().getFirst(), config);
    }

    /**
     * A store with its own Lettuce client on a standalone (or Sentinel-managed) Redis, as
     * {@link #create(String, RedisStoreConfig)} makes it for a {@code redis://} string: for callers that
     * hold a {@link RedisURI} (built from a framework's connection settings, say). Sets the URI's timeout
     * to the config's command timeout.
     */
    public static RedisIdempotencyStore create(RedisURI uri, RedisStoreConfig config) {
        Objects.requireNonNull(config, "config");
        uri.setTimeout(config.commandTimeout());
        RedisClient client = RedisClient.create(uri);
        client.setOptions(ClientOptions.builder()
                .socketOptions(socketOptions(config))
                .timeoutOptions(TimeoutOptions.enabled(config.commandTimeout()))
                .build());
        return new RedisIdempotencyStore(config, "standalone", standaloneConnector(client), client::shutdown);
    }

    /**
     * A store with its own Lettuce client on Redis Cluster, seeded by {@code seeds}, as
     * {@link #create(String, RedisStoreConfig)} makes it for a {@code redis-cluster://} string. Sets each
     * seed's timeout to the config's command timeout.
     */
    public static RedisIdempotencyStore createCluster(List<RedisURI> seeds, RedisStoreConfig config) {
        Objects.requireNonNull(config, "config");
        if (seeds.isEmpty()) {
            throw new IllegalArgumentException("a Redis Cluster store needs at least one seed node");
        }
        List<RedisURI> uris = List.copyOf(seeds);
        uris.forEach(seed -> seed.setTimeout(config.commandTimeout()));
        SocketOptions socket = socketOptions(config);
        TimeoutOptions timeouts = TimeoutOptions.enabled(config.commandTimeout());
        RedisClusterClient client = RedisClusterClient.create(uris);
        client.setOptions(ClusterClientOptions.builder()
                .socketOptions(socket)
                .timeoutOptions(timeouts)
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(CLUSTER_TOPOLOGY_REFRESH)
                        .build())
                .build());
        return new RedisIdempotencyStore(config, "cluster", clusterConnector(client), client::shutdown);
    }

    private static SocketOptions socketOptions(RedisStoreConfig config) {
        return SocketOptions.builder().connectTimeout(config.connectTimeout()).build();
    }

    /** This store's settings. */
    public RedisStoreConfig config() {
        return config;
    }

    @Override
    public ClaimOutcome claim(ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease,
            Duration retention) {
        Objects.requireNonNull(owner, "owner");
        long leaseMillis = millis(lease, "lease");
        long retentionMillis = millis(retention, "retention");
        return call("claim", commands -> {
            List<?> reply = LuaScript.CLAIM.run(commands, recordKey(key),
                    RecordValue.ascii(fingerprint.encoded()), RecordValue.ascii(owner.value()),
                    RecordValue.decimal(leaseMillis), RecordValue.decimal(retentionMillis));
            byte[] outcome = (byte[]) reply.get(0);
            byte[] value = (byte[]) reply.get(1);
            return switch (outcome[0]) {
                case 'c' -> new ClaimOutcome.Claimed(RecordValue.claimed(key, fingerprint, owner,
                        Long.parseLong(new String(value, StandardCharsets.US_ASCII)), leaseMillis, retentionMillis),
                        false);
                case 't' -> new ClaimOutcome.Claimed(RecordValue.decode(key, value), true);
                case 'i' -> new ClaimOutcome.InFlight(RecordValue.decode(key, value));
                case 'f' -> new ClaimOutcome.Finished(RecordValue.decode(key, value));
                default -> throw new IllegalArgumentException(
                        "unknown claim outcome " + new String(outcome, StandardCharsets.US_ASCII));
            };
        });
    }

    @Override
    public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        if (!outcome.isFinished()) {
            throw new IllegalArgumentException("complete takes COMPLETED or FAILED");
        }
        byte[] headers = HeaderCodec.encode(response.headers());
        byte[] status = outcome == RecordStatus.COMPLETED ? COMPLETED : FAILED;
        long applied = call("complete", commands -> LuaScript.COMPLETE.<Long>run(commands,
                new byte[][] {recordKey(key), waiterKey(key)},
                RecordValue.ascii(owner.value()), status, RecordValue.decimal(response.status()),
                headers, response.body(), channel, RecordValue.ascii(key.hash())));
        return signalledIf(applied == 1L, key);
    }

    @Override
    public boolean release(ScopeKey key, OwnerToken owner) {
        long applied = call("release", commands -> LuaScript.RELEASE.<Long>run(commands,
                new byte[][] {recordKey(key), waiterKey(key)},
                RecordValue.ascii(owner.value()), channel, RecordValue.ascii(key.hash())));
        return signalledIf(applied == 1L, key);
    }

    @Override
    public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
        byte[] leaseMillis = RecordValue.decimal(millis(lease, "lease"));
        long applied = call("renew", commands -> LuaScript.RENEW.<Long>run(commands, recordKey(key),
                RecordValue.ascii(owner.value()), leaseMillis));
        return applied == 1L;
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopeKey key) {
        return Optional.ofNullable(call("find", commands -> {
            byte[] value = commands.get(recordKey(key));
            return value == null ? null : RecordValue.decode(key, value);
        }));
    }

    /**
     * Registers a local waiter (the store's single pub/sub subscription, opened with the first connection,
     * wakes it) and sets the scope's waiter marker ({@link RedisStoreConfig#waiterKey}, one {@code SET}
     * with a TTL of {@value #WAITER_MARK_MILLIS} ms, renewed while the subscription waits), so that
     * completions and releases of the scope publish. The marker is set before this returns: a change after
     * it is published, and a change before it is seen by the claim that follows the subscription.
     */
    @Override
    public ChangeSubscription subscribe(ScopeKey key) {
        connections();
        ChangeSubscription local = waiters.subscribe(key);
        try {
            markWaiting(key);
        } catch (RuntimeException e) {
            local.close();
            throw e;
        }
        return new MarkedSubscription(key, local);
    }

    /** Closes the connections (and the client, if this store created it); idempotent. */
    @Override
    public void close() {
        connectLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            Connections open = connections;
            connections = null;
            if (open != null) {
                open.close();
            }
        } finally {
            connectLock.unlock();
        }
        shutdownClient.run();
        waiters.signalAll();
    }

    @Override
    public String toString() {
        return "RedisIdempotencyStore[" + topology + ", prefix=" + config.keyPrefix() + "]";
    }

    /** A local signal too: waiters in this process need not wait for the pub/sub round trip. */
    private boolean signalledIf(boolean applied, ScopeKey key) {
        if (applied) {
            waiters.signal(key);
        }
        return applied;
    }

    private byte[] recordKey(ScopeKey key) {
        return RecordValue.ascii(config.recordKey(key));
    }

    private byte[] waiterKey(ScopeKey key) {
        return RecordValue.ascii(config.waiterKey(key));
    }

    private void markWaiting(ScopeKey key) {
        call("subscribe", commands -> commands.set(waiterKey(key), WAITER_MARK, WAITER_MARK_ARGS));
    }

    private static long millis(Duration duration, String name) {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be positive");
        }
        long millis = duration.toMillis();
        return duration.equals(Duration.ofMillis(millis)) ? millis : millis + 1;
    }

    private <T> T call(String operation, Function<RedisClusterCommands<byte[], byte[]>, T> command) {
        RedisClusterCommands<byte[], byte[]> commands = connections().commands();
        try {
            return command.apply(commands);
        } catch (RedisException e) {
            throw unavailable(operation, e);
        } catch (IllegalArgumentException | ClassCastException | IndexOutOfBoundsException e) {
            throw new StoreUnavailableException(
                    "unreadable idempotency record in Redis (" + operation + "): " + e.getMessage(), e);
        }
    }

    private StoreUnavailableException unavailable(String operation, RedisException cause) {
        return new StoreUnavailableException("Redis " + topology + " failed during " + operation + ": " + cause, cause);
    }

    private Connections connections() {
        Connections current = connections;
        return current != null ? current : connect();
    }

    private Connections connect() {
        connectLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the Redis idempotency store is closed");
            }
            Connections current = connections;
            if (current != null) {
                return current;
            }
            RedisException recent = lastConnectFailure;
            if (recent != null && System.nanoTime() - lastConnectFailureNanos
                    < TimeUnit.MILLISECONDS.toNanos(RECONNECT_BACKOFF_MILLIS)) {
                throw unavailable("connect (failed less than " + RECONNECT_BACKOFF_MILLIS + " ms ago)", recent);
            }
            try {
                current = open();
            } catch (RedisException e) {
                lastConnectFailure = e;
                lastConnectFailureNanos = System.nanoTime();
                throw unavailable("connect", e);
            }
            lastConnectFailure = null;
            connections = current;
            return current;
        } finally {
            connectLock.unlock();
        }
    }

    /** Opens both connections and subscribes to the change channel before the store is used. */
    private Connections open() {
        Connections opened = connector.open();
        try {
            opened.connection().setTimeout(config.commandTimeout());
            opened.pubSub().setTimeout(config.commandTimeout());
            opened.pubSub().addListener(listener);
            opened.pubSub().sync().subscribe(channel);
            return opened;
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
    }

    private static Connector standaloneConnector(RedisClient client) {
        Objects.requireNonNull(client, "client");
        return () -> {
            StatefulRedisConnection<byte[], byte[]> connection = client.connect(CODEC);
            return withPubSub(connection, connection.sync(), () -> client.connectPubSub(CODEC));
        };
    }

    private static Connector clusterConnector(RedisClusterClient client) {
        Objects.requireNonNull(client, "client");
        return () -> {
            StatefulRedisClusterConnection<byte[], byte[]> connection = client.connect(CODEC);
            return withPubSub(connection, connection.sync(), () -> client.connectPubSub(CODEC));
        };
    }

    private static Connections withPubSub(
            StatefulConnection<byte[], byte[]> connection,
            RedisClusterCommands<byte[], byte[]> commands,
            Supplier<? extends StatefulRedisPubSubConnection<byte[], byte[]>> pubSub) {
        try {
            return new Connections(connection, commands, pubSub.get());
        } catch (RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /** Opens the command and pub/sub connections of one topology. */
    @FunctionalInterface
    private interface Connector {
        Connections open();
    }

    private record Connections(
            StatefulConnection<byte[], byte[]> connection,
            RedisClusterCommands<byte[], byte[]> commands,
            StatefulRedisPubSubConnection<byte[], byte[]> pubSub) {

        void close() {
            pubSub.close();
            connection.close();
        }
    }

    /** A local subscription whose waiter marker is renewed while it waits longer than half the marker's TTL. */
    private final class MarkedSubscription implements ChangeSubscription {
        private final ScopeKey key;
        private final ChangeSubscription local;
        private long markedAt = System.nanoTime();

        MarkedSubscription(ScopeKey key, ChangeSubscription local) {
            this.key = key;
            this.local = local;
        }

        @Override
        public boolean await(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
            while (true) {
                long now = System.nanoTime();
                long renewAt = markedAt + TimeUnit.MILLISECONDS.toNanos(WAITER_MARK_MILLIS / 2);
                if (renewAt - now <= 0) {
                    try {
                        markWaiting(key);
                        markedAt = now;
                    } catch (StoreUnavailableException e) {
                        // the wait goes on; the caller's next claim meets the failure if it lasts
                    }
                    renewAt = now + TimeUnit.MILLISECONDS.toNanos(WAITER_MARK_MILLIS / 2);
                }
                long slice = Math.min(deadline, renewAt) - now;
                if (local.await(Duration.ofNanos(Math.max(0, slice)))) {
                    return true;
                }
                if (deadline - System.nanoTime() <= 0) {
                    return false;
                }
            }
        }

        @Override
        public void close() {
            local.close();
        }
    }

    /**
     * Wakes the waiters of a published scope; on every subscription confirmation (the first, and each
     * re-subscription after a reconnect) wakes all waiters, since messages may have been missed.
     */
    private final class ChangeListener extends RedisPubSubAdapter<byte[], byte[]> {
        @Override
        public void message(byte[] channel, byte[] message) {
            String hash = new String(message, StandardCharsets.US_ASCII);
            try {
                waiters.signal(new ScopeKey(hash));
            } catch (IllegalArgumentException foreign) {
                // not a scope hash: someone else publishes on our channel; nothing to wake
            }
        }

        @Override
        public void subscribed(byte[] channel, long count) {
            waiters.signalAll();
        }
    }
}
