package dev.exactly.idempotency.redis;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.redis.internal.CommandDeadlines;
import dev.exactly.idempotency.redis.internal.FlushConsolidation;
import dev.exactly.idempotency.redis.internal.HeldClaims;
import dev.exactly.idempotency.redis.internal.LuaScript;
import dev.exactly.idempotency.redis.internal.RecordValue;
import dev.exactly.idempotency.redis.internal.RedisEndpoints;
import dev.exactly.idempotency.redis.internal.ServerClock;
import dev.exactly.idempotency.redis.internal.StoreClientResources;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spi.LocalWaiters;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
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
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.NettyCustomizer;
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
 * {@link RedisStoreConfig#recordKey}): status, times, lease mark, owner, fingerprint and, once finished,
 * the response, packed into one value ({@code RecordValue} describes the bytes), so that a claim, and a
 * replay, is one {@code SET} and a completion one {@code SET} (inside a small script on a server without
 * compare-and-set). Next to it, while
 * some process waits for the scope, a waiter marker ({@link RedisStoreConfig#waiterKey}). The braces are a
 * Cluster hash tag, so a scope's keys share one slot. All values go through a byte-array codec.
 *
 * <h2>Atomicity protocol</h2>
 * Every transition is <em>one</em> Redis command: a plain {@code SET} or a Lua script (resources
 * {@code dev/exactly/idempotency/redis/*.lua}), run with {@code EVALSHA} and re-sent with {@code EVAL} on
 * {@code NOSCRIPT} (server restart, {@code SCRIPT FLUSH}, a Cluster node that has not seen it yet). Redis
 * runs a command or a script without interleaving any other, so there is no read-then-write race.
 * <ul>
 *   <li><b>claim</b> — {@code SET key value NX PX ttl GET} (Redis 7.0 and later), the value (a
 *       {@code PROCESSING} record owned by the caller's token, passed in so that a claim whose answer was
 *       lost can be released by it) built by the client, the TTL the retention (or the lease, should
 *       that be longer: a record never expires under a live lease). Absent: written, {@code Claimed}.
 *       Present: nothing is written and the record comes back: finished, {@code Finished} (a replay is
 *       this one command); processing with another fingerprint, or with a lease that ends after the
 *       client's estimate of the server's clock plus its uncertainty, {@code InFlight}. Otherwise (the
 *       lease may be over) <b>claim.lua</b> decides atomically: the lease is over once the key's
 *       {@code PTTL} is at or below the record's <em>lease mark</em> ({@code ttl - lease} at the claim),
 *       which only the server's count of the TTL decides; then, with the same fingerprint, the record
 *       goes to the new token with a new lease and the retention as TTL ({@code Claimed}, takeover).
 *       On a Redis before 7.0 (its {@code INFO server} at connect, or a refused {@code SET ... NX GET})
 *       every claim is claim.lua, which also writes the value of a new claim. While more than three in
 *       four keys the store claimed lately had a finished record (a storm of retries), a claim is first a
 *       plain {@code GET}: a finished record is the answer ({@code Finished}; finished records change no
 *       more, so the read decides as the {@code SET} would), any other key goes on as above.</li>
 *   <li><b>finish.lua</b> — the completion of a claim this store made: only if {@code PROCESSING} and
 *       owned by the token presented (one comparison at a fixed offset), write the finished value the
 *       client sends whole (status, finish time, then the processing value's retention, owner,
 *       fingerprint and creation time as its claim wrote them, then the response) with the retention as
 *       TTL, and, if the scope's waiter marker exists, {@code PUBLISH} the scope hash on the change
 *       channel (both taken from the record's key). The store holds the value each of its claims wrote
 *       (or its takeover returned) until the completion or release ({@code HeldClaims}): while the owner
 *       matches, no one else has changed those bytes. It runs only when the record is not that value byte
 *       for byte (below).</li>
 *   <li><b>SET ... IFEQ</b> — the common completion of a held claim, nobody waiting, without a script on a
 *       server with compare-and-set (Valkey 8.1, Redis 8.4 and later; {@code INFO server} at connect):
 *       {@code SET record finished IFEQ processing PX retention}, written only while the record is, byte
 *       for byte, the processing value held; it publishes nothing (see touch.lua). On a server without it,
 *       <b>finish-if-equal.lua</b> does the same in the least a fenced completion costs there: a {@code GET},
 *       a comparison and a {@code SET}, one key and three arguments. A record that is not the value held (a
 *       waiter touched it, a renewal rewrote its lease fields, a takeover its owner, a completion its
 *       status) goes to finish.lua, which decides by the owner and publishes if the waiter marker exists: a
 *       second round trip, taken only when someone waits or the owner's record changed. A refused
 *       {@code IFEQ} (a server or Cluster node without it) switches the store to finish-if-equal.lua.</li>
 *   <li><b>touch.lua</b> — a claim in flight while this process waits for the scope (its waiter marker set
 *       before that claim): a processing record's expiry field is shown one millisecond earlier (nothing a
 *       decision reads, nor the TTL), so that no owner holds that value any more and its completion, by
 *       {@code SET ... IFEQ} or finish-if-equal.lua, finds another value and goes to finish.lua, which
 *       publishes; the record comes back as it now is (absent: the claim is made again).</li>
 *   <li><b>complete.lua</b> — the same step for an owner token whose claim this store does not hold
 *       (another instance's, or one dropped from a full table): the client sends the front and the
 *       response, and the script writes them around the stored value's retention, owner, fingerprint
 *       and creation time. Both write the same bytes.</li>
 *   <li><b>release.lua</b> — only for the owner of a processing record: {@code DEL} it and, if the
 *       waiter marker exists, {@code PUBLISH}.</li>
 *   <li><b>renew.lua</b> — only for the owner of a processing record: lease end {@code = TIME + lease};
 *       if the lease outlasts the key's TTL, the TTL (and the expiry) becomes the lease; the lease mark
 *       follows.</li>
 * </ul>
 * The times a record shows (created, lease end, expiry, finish) are the server's clock as this process
 * estimates it ({@code ServerClock}: {@code TIME} at connect, refreshed every 30 s, off by half a round
 * trip plus drift), written by the client so that the common path runs no script reading {@code TIME};
 * no ownership decision depends on them. The lease is in the value and the TTL is the retention (never
 * "lock TTL = record TTL"): a finished record outlives the lease, and an abandoned claim is still there,
 * with its fingerprint, when a retry comes to take it over. Writes by a stale owner return {@code false}
 * and change nothing. {@link #find} is one {@code GET}; expired records are gone by TTL. Commands go
 * through Lettuce's asynchronous API, each answer awaited without a timed wait per command, its deadline
 * kept by the store's one sweeping thread ({@code CommandDeadlines}); the claim's
 * {@code SET} and the scripts' {@code EVALSHA} are built here from the byte arrays the store already holds
 * (a script's digest encoded once), not through Lettuce's command builders (which take a {@code SetArgs}
 * and the digest as text per call).
 *
 * <h2>Change notification</h2>
 * complete and release publish the scope hash on one channel, {@link RedisStoreConfig#changesChannel()},
 * when somebody waits for the scope: {@link #subscribe} sets the scope's waiter marker (one {@code SET}
 * with a TTL, renewed while the wait lasts) before the waiter claims again, and the scripts publish only
 * while the marker exists, so the common case (nobody waits) sends no message and no instance receives
 * one. That claim, finding the record in flight, touches it (touch.lua), so that a completion that looks
 * for no marker ({@code SET ... IFEQ}, or finish-if-equal.lua) cannot apply to a
 * record someone waits for: it goes to finish.lua's owner check, which publishes. A change is therefore
 * published when it happens to the record a waiter's claim found in flight after its subscription, which is
 * what {@link IdempotencyStore#subscribe} asks for. Each store
 * holds one pub/sub connection subscribed to the channel (for Cluster, the Cluster pub/sub connection; a
 * classic {@code PUBLISH} reaches every node) and wakes the matching {@link LocalWaiters}. Whenever the
 * subscription is (re-)established, for instance after a reconnect during which messages may have been
 * lost, every local waiter is woken to re-read.
 *
 * <h2>Failures and guarantees</h2>
 * Connections are opened on first use (a store can be built while Redis is down) and then re-established
 * by Lettuce. Any Lettuce connection, timeout or command error becomes a
 * {@link StoreUnavailableException} and the engine fails closed. Each command waits at most
 * {@link RedisStoreConfig#commandTimeout()} and one sweep of the deadline thread (an eighth of the timeout,
 * at most {@value CommandDeadlines#MAX_SWEEP_MILLIS} ms); after a failed connection attempt, further calls fail at
 * once for {@value #RECONNECT_BACKOFF_MILLIS} ms instead of queueing behind it. Redis is a <em>hot
 * tier</em>: replication is asynchronous, so a failover (or a primary restarting empty) can lose a claim
 * or a completion that was already acknowledged. Exactly-once for payments comes from the durable tier
 * (PostgreSQL) committing the outcome with a unique constraint on the scope; this store only makes
 * duplicates cheap to reject or coalesce. Nor does a record outlive eviction: a Redis that evicts keys when
 * its memory is full ({@code maxmemory} with a policy other than {@code noeviction}, every master's
 * {@code INFO memory} read whenever the store connects) is refused, every call failing closed with the
 * setting named, unless {@link RedisStoreConfig#evictionAllowed()}.
 *
 * <p>Thread-safe. {@link #close()} closes the store's connections and ends the thread that keeps its
 * commands' deadlines (a daemon thread, started by the first command), and shuts the client down only if
 * the store created it ({@link #create(String)}).
 */
public final class RedisIdempotencyStore implements IdempotencyStore {
    /** How long calls fail at once after a failed connection attempt. */
    public static final long RECONNECT_BACKOFF_MILLIS = 500;

    private static final ByteArrayCodec CODEC = ByteArrayCodec.INSTANCE;
    private static final byte[] RECORD_KEY_TAIL = {'}', ':', 'r'};
    private static final byte[] WAITER_KEY_TAIL = {'}', ':', 'w'};
    /** How long a waiter marker lives unless the waiting subscription renews it. */
    public static final long WAITER_MARK_MILLIS = 600_000;

    private static final Duration CLUSTER_TOPOLOGY_REFRESH = Duration.ofSeconds(30);
    /** The longest lease or retention a record holds: its times are 13-digit epoch milliseconds. */
    private static final Duration MAX_DURATION = Duration.ofDays(36_500);

    private static final byte[] WAITER_MARK = {'1'};
    private static final SetArgs WAITER_MARK_ARGS = SetArgs.Builder.px(WAITER_MARK_MILLIS);
    /** How many times in a row a waiter's claim re-claims a record that was gone when it came to touch it. */
    private static final int TOUCH_ATTEMPTS = 3;
    /**
     * The claim's {@code SET} options as bytes: Lettuce's keyword constants differ between its versions
     * (6.x, which Spring Boot manages, has no {@code CommandKeyword.PX}), bytes are the same in all.
     */
    private static final byte[] NX = {'N', 'X'};

    private static final byte[] PX = {'P', 'X'};
    private static final byte[] GET = {'G', 'E', 'T'};
    private static final byte[] IFEQ = {'I', 'F', 'E', 'Q'};
    /** {@link #finishedShare} of all keys replays. */
    private static final int ONE = 1024;
    /** Above this {@link #finishedShare} a claim reads first. */
    private static final int READ_FIRST = ONE * 3 / 4;

    private final RedisStoreConfig config;
    private final String topology;
    private final Connector connector;
    private final Runnable shutdownClient;
    private final byte[] channel;
    /** Every scope key up to the scope hash: the key prefix and an opening brace. */
    private final byte[] recordKeyHead;

    private final LocalWaiters waiters = new LocalWaiters();
    private final ChangeListener listener = new ChangeListener();
    private final ReentrantLock connectLock = new ReentrantLock();
    private final ServerClock clock = new ServerClock();
    private final long timeoutNanos;
    private final CommandDeadlines deadlines;
    private final HeldClaims held = new HeldClaims();
    /** Claims start with {@code SET ... NX GET}; false on a Redis older than 7.0 (every claim a script). */
    private volatile boolean plainClaims = true;
    /**
     * The share of finished records among the keys claimed lately, in 1/{@value #ONE}: each claim moves it a
     * sixteenth of the way to {@value #ONE} (the key had a finished record: a replay) or to 0 (any other key).
     * Above {@value #READ_FIRST} (three in four replays, as in a storm of retries after an outage) a claim
     * sends a plain {@code GET} first and the claim only for a key that has no finished record: a replay is
     * then the one read any replay must make, with no value built and sent, and any other key pays a second
     * round trip. Updated without synchronisation: a lost update only delays a switch by a claim.
     */
    private volatile int finishedShare;
    /** Tests: the claims' first command stays as set ({@link #claimFirst}); claims do not move it. */
    private volatile boolean finishedSharePinned;
    /**
     * Completions of held claims start with {@code SET ... IFEQ} (a server with compare-and-set: Valkey 8.1,
     * Redis 8.4 and later, as {@code INFO server} tells at connect); false on any other, or once refused.
     */
    private volatile boolean compareAndSet;

    private volatile @Nullable Connections connections;
    private volatile boolean closed;
    private @Nullable RedisException lastConnectFailure;
    private long lastConnectFailureNanos;

    private RedisIdempotencyStore(
            RedisStoreConfig config, String topology, Connector connector, Runnable shutdownClient) {
        this.config = Objects.requireNonNull(config, "config");
        this.topology = topology;
        this.connector = connector;
        this.shutdownClient = shutdownClient;
        this.channel = RecordValue.ascii(config.changesChannel());
        this.recordKeyHead = RecordValue.ascii(config.keyPrefix() + "{");
        this.timeoutNanos = config.commandTimeout().toNanos();
        this.deadlines = new CommandDeadlines(config.commandTimeout(), "exactly-redis-command-deadlines");
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
     * The client gets the config's connect and command timeouts: the store bounds the wait for each
     * command's answer itself, so the client schedules no timer of its own per command; a
     * Cluster client refreshes its topology on redirects and reconnects
     * (Lettuce's adaptive triggers) and every 30 seconds. Its channels consolidate flushes
     * ({@link #consolidatedFlushes()}): the commands of concurrent requests waiting for the event loop
     * leave in one socket write. A Cluster client's connections, one per node, share one event loop, which
     * its commands keep busier than the several Lettuce would give it, so that fewer of them wake a sleeping
     * loop; a client of the caller's own ({@link #cluster}) keeps its own arrangement. Nothing is connected
     * until the first call.
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
        ClientResources resources = StoreClientResources.standalone();
        RedisClient client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                .socketOptions(socketOptions(config))
                .timeoutOptions(commandTimers())
                .build());
        return new RedisIdempotencyStore(
                config, "standalone", standaloneConnector(client), () -> shutdown(client::shutdown, resources));
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
        ClientResources resources = StoreClientResources.cluster();
        RedisClusterClient client = RedisClusterClient.create(resources, uris);
        client.setOptions(ClusterClientOptions.builder()
                .socketOptions(socket)
                .timeoutOptions(commandTimers())
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(CLUSTER_TOPOLOGY_REFRESH)
                        .build())
                .build());
        return new RedisIdempotencyStore(
                config, "cluster", clusterConnector(client), () -> shutdown(client::shutdown, resources));
    }

    /** Shuts a client of the store's own down, then the resources (threads, timers) made for it alone. */
    private static void shutdown(Runnable client, ClientResources resources) {
        try {
            client.run();
        } finally {
            StoreClientResources.shutdown(resources);
        }
    }

    /**
     * What the clients the store creates do with their channels, for a client of the caller's own
     * ({@link #standalone}, {@link #cluster}): commands that concurrent callers hand one connection while
     * its event loop is busy leave in one socket write instead of one write each, and a lone command in the
     * same turn of the event loop (Netty's {@code FlushConsolidationHandler} at the head of each channel).
     * Set it on the client's resources, {@code ClientResources.builder().nettyCustomizer(...)}; the store
     * is as correct without it.
     */
    public static NettyCustomizer consolidatedFlushes() {
        return FlushConsolidation.customizer();
    }

    /**
     * The command timeouts of a client the store creates: none of Lettuce's own. Every command the store
     * sends is awaited at most the command timeout and one sweep ({@code CommandDeadlines}, which cancels
     * it then), the one it does not await (a refresh of the clock estimate) has a timeout of its own, and
     * the pub/sub connection's synchronous calls wait the connection's timeout; a timer per command in
     * the client as well (a task scheduled in its timer wheel and cancelled again on every answer) would
     * be a second timer for the same wait.
     */
    private static TimeoutOptions commandTimers() {
        return TimeoutOptions.builder().timeoutCommands(false).build();
    }

    private static SocketOptions socketOptions(RedisStoreConfig config) {
        return SocketOptions.builder().connectTimeout(config.connectTimeout()).build();
    }

    /** This store's settings. */
    public RedisStoreConfig config() {
        return config;
    }

    @Override
    public ClaimOutcome claim(
            ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
        Objects.requireNonNull(owner, "owner");
        long leaseMillis = millis(lease, "lease");
        long retentionMillis = millis(retention, "retention");
        ClaimOutcome outcome = call(
                "claim",
                commands -> claimOnce(
                        commands, key, fingerprint, owner, leaseMillis, retentionMillis, finishedShare > READ_FIRST));
        count(outcome instanceof ClaimOutcome.Finished);
        // A claim in flight while this process waits for the scope (its marker set by subscribe, before this
        // re-claim) touches the record (touch.lua): an owner completing by SET ... IFEQ, which publishes nothing,
        // then finds another value and goes to finish.lua, which publishes. A record gone in between is claimed again.
        for (int gone = 0; outcome instanceof ClaimOutcome.InFlight && waiters.hasWaiters(key); gone++) {
            byte[] touched =
                    call("claim", commands -> LuaScript.TOUCH.<byte[]>run(commands, deadlines, recordKey(key)));
            if (touched != null) {
                IdempotencyRecord current = RecordValue.decode(key, touched);
                return current.status().isFinished()
                        ? new ClaimOutcome.Finished(current)
                        : new ClaimOutcome.InFlight(current);
            }
            if (gone == TOUCH_ATTEMPTS) {
                return outcome; // gone again and again: the wait ends at the lease end or the poll, then claims
            }
            outcome = call(
                    "claim",
                    commands -> claimOnce(commands, key, fingerprint, owner, leaseMillis, retentionMillis, false));
        }
        return outcome;
    }

    /**
     * One claim: {@code SET ... NX PX GET}, then claim.lua when the lease may be over (or every time before 7.0);
     * with {@code readFirst}, a {@code GET} before them, which alone answers a key with a finished record.
     */
    private ClaimOutcome claimOnce(
            RedisClusterAsyncCommands<byte[], byte[]> commands,
            ScopeKey key,
            Fingerprint fingerprint,
            OwnerToken owner,
            long leaseMillis,
            long retentionMillis,
            boolean readFirst) {
        byte[] recordKey = recordKey(key);
        if (readFirst) {
            byte[] current = await(commands.get(recordKey));
            if (current != null) {
                IdempotencyRecord record = RecordValue.decode(key, current);
                if (record.status().isFinished()) {
                    return new ClaimOutcome.Finished(record); // finished records change no more: no write needed
                }
            }
        }
        long ttl = Math.max(leaseMillis, retentionMillis);
        long now = clock.nowMillis();
        byte[] value = RecordValue.processing(owner, fingerprint, now, leaseMillis, retentionMillis);
        if (plainClaims) {
            byte[] previous;
            try {
                previous = await(commands.dispatch(
                        CommandType.SET,
                        new ValueOutput<>(CODEC),
                        new CommandArgs<>(CODEC)
                                .addKey(recordKey)
                                .add(value)
                                .add(NX)
                                .add(PX)
                                .add(ttl)
                                .add(GET)));
            } catch (RedisCommandExecutionException refused) {
                if (!syntaxRefused(refused)) {
                    throw refused;
                }
                plainClaims = false;
                previous = null;
            }
            if (plainClaims) {
                if (previous == null) {
                    held.hold(owner, recordKey, value);
                    return new ClaimOutcome.Claimed(
                            RecordValue.claimed(key, fingerprint, owner, now, leaseMillis, retentionMillis), false);
                }
                IdempotencyRecord current = RecordValue.decode(key, previous);
                if (current.status().isFinished()) {
                    return new ClaimOutcome.Finished(current);
                }
                if (!current.fingerprint().equals(fingerprint)
                        || Objects.requireNonNull(current.leaseExpiresAt(), "a record in flight has a lease")
                                        .toEpochMilli()
                                > clock.nowMillis() + clock.uncertaintyMillis()) {
                    return new ClaimOutcome.InFlight(current);
                }
                // the lease may be over: the script decides on the server's count, atomically
            }
        }
        List<?> reply = LuaScript.CLAIM.run(
                commands,
                deadlines,
                recordKey,
                RecordValue.ascii(fingerprint.encoded()),
                RecordValue.fence(owner),
                RecordValue.decimal(leaseMillis),
                RecordValue.decimal(retentionMillis),
                value);
        byte[] outcome = (byte[]) reply.get(0);
        byte[] answer = (byte[]) reply.get(1);
        return switch (outcome[0]) {
            case 'c' -> {
                held.hold(owner, recordKey, value);
                yield new ClaimOutcome.Claimed(
                        RecordValue.claimed(key, fingerprint, owner, now, leaseMillis, retentionMillis), false);
            }
            case 't' -> {
                IdempotencyRecord taken = RecordValue.decode(key, answer);
                held.hold(owner, recordKey, answer);
                yield new ClaimOutcome.Claimed(taken, true);
            }
            case 'i' -> new ClaimOutcome.InFlight(RecordValue.decode(key, answer));
            case 'f' -> new ClaimOutcome.Finished(RecordValue.decode(key, answer));
            default ->
                throw new IllegalArgumentException(
                        "unknown claim outcome " + new String(outcome, StandardCharsets.US_ASCII));
        };
    }

    /**
     * A server refuses an option of {@code SET} it does not know ({@code NX GET} before Redis 7.0, {@code IFEQ}
     * before Valkey 8.1 and Redis 8.4) as a syntax error, and runs nothing.
     */
    static boolean syntaxRefused(RedisCommandExecutionException e) {
        String message = e.getMessage();
        return message != null && message.startsWith("ERR syntax error");
    }

    @Override
    public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
        if (!outcome.isFinished()) {
            throw new IllegalArgumentException("complete takes COMPLETED or FAILED");
        }
        byte[] part = RecordValue.finishedPart(response);
        byte[][] keys = scopeKeys(key);
        byte[] processing = held.take(owner, keys[0]);
        long applied = call("complete", commands -> {
            if (processing == null) {
                return LuaScript.COMPLETE.<Long>run(
                        commands,
                        deadlines,
                        keys,
                        RecordValue.fence(owner),
                        RecordValue.finishedFront(outcome, clock.nowMillis()),
                        part);
            }
            byte[] finished = RecordValue.finished(processing, outcome, clock.nowMillis(), part);
            byte[] retention = RecordValue.retention(processing);
            if (finishIfEqual(commands, keys[0], processing, finished, retention)) {
                return 1L;
            }
            // the record is not the value held (touched, renewed, taken over, finished, gone): the script
            // decides by the owner, and publishes while someone waits
            return LuaScript.FINISH.<Long>run(commands, deadlines, keys, RecordValue.fence(owner), finished, retention);
        });
        return signalledIf(applied == 1L, key);
    }

    /**
     * The completion of a held claim: on a server with compare-and-set {@code SET record finished IFEQ
     * processing PX retention}, without a script, else finish-if-equal.lua, the same step in a script of a
     * {@code GET} and a {@code SET}; either writes only while the record is, byte for byte, the
     * processing value this store's claim wrote (or its takeover returned), so only while its owner holds it
     * unchanged. It publishes nothing, and needs not: a process that waits for the scope sets its marker, then
     * claims again, and a claim in flight under a marker touches the record ({@code touch.lua}), so a record
     * someone waits for is never the value its owner holds; that owner's {@code IFEQ} finds another value and
     * its completion goes to finish.lua, which publishes.
     *
     * @return whether the record was written; false when it was not as held (the caller's script decides)
     *     or when the server refused {@code IFEQ} (then this store sends the script from then on)
     */
    private boolean finishIfEqual(
            RedisClusterAsyncCommands<byte[], byte[]> commands,
            byte[] recordKey,
            byte[] processing,
            byte[] finished,
            byte[] retention) {
        if (!compareAndSet) {
            return LuaScript.FINISH_IF_EQUAL.<Long>run(commands, deadlines, recordKey, finished, processing, retention)
                    == 1L;
        }
        try {
            return await(commands.dispatch(
                            CommandType.SET,
                            new StatusOutput<>(CODEC),
                            new CommandArgs<>(CODEC)
                                    .addKey(recordKey)
                                    .add(finished)
                                    .add(IFEQ)
                                    .add(processing)
                                    .add(PX)
                                    .add(retention)))
                    != null;
        } catch (RedisCommandExecutionException refused) {
            if (!syntaxRefused(refused)) {
                throw refused;
            }
            compareAndSet = false; // a server (or a Cluster node) without IFEQ: it ran nothing
            return false;
        }
    }

    @Override
    public boolean release(ScopeKey key, OwnerToken owner) {
        byte[][] keys = scopeKeys(key);
        held.take(owner, keys[0]);
        long applied = call(
                "release",
                commands -> LuaScript.RELEASE.<Long>run(commands, deadlines, keys, RecordValue.fence(owner)));
        return signalledIf(applied == 1L, key);
    }

    @Override
    public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
        byte[] leaseMillis = RecordValue.decimal(millis(lease, "lease"));
        long applied = call(
                "renew",
                commands -> LuaScript.RENEW.<Long>run(
                        commands, deadlines, recordKey(key), RecordValue.fence(owner), leaseMillis));
        return applied == 1L;
    }

    @Override
    public Optional<IdempotencyRecord> find(ScopeKey key) {
        return Optional.ofNullable(this.<@Nullable IdempotencyRecord>call("find", commands -> {
            byte[] value = await(commands.get(recordKey(key)));
            return value == null ? null : RecordValue.decode(key, value);
        }));
    }

    /**
     * Registers a local waiter (the store's single pub/sub subscription, opened with the first connection,
     * wakes it) and sets the scope's waiter marker ({@link RedisStoreConfig#waiterKey}, one {@code SET}
     * with a TTL of {@value #WAITER_MARK_MILLIS} ms, renewed while the subscription waits), so that
     * completions and releases of the scope publish. The marker is set before this returns: a change before
     * it is seen by the claim that follows the subscription, and that claim, when it finds the record in
     * flight, touches it, so that its completion or release is published.
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

    /** Closes the connections (and the client, if this store created it) and ends the deadline thread; idempotent. */
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
        deadlines.close();
        waiters.signalAll();
    }

    /** Counts a claim's key in {@link #finishedShare}. */
    private void count(boolean finished) {
        if (finishedSharePinned) {
            return;
        }
        int now = finishedShare;
        int next = finished ? now + ((ONE - now) >> 4) : now - (now >> 4);
        if (next != now) {
            finishedShare = next;
        }
    }

    /**
     * Tests: makes the claims' first command {@code first} ({@code "get"} or {@code "set"}, {@link #claimsFirst()});
     * {@code pinned}: claims do not move it.
     */
    void claimFirst(String first, boolean pinned) {
        finishedSharePinned = pinned;
        finishedShare = switch (first) {
            case "get" -> READ_FIRST + (ONE - READ_FIRST) / 2;
            case "set" -> 0;
            default -> throw new IllegalArgumentException(first);
        };
    }

    /** Tests: the claims' first command now, {@code "get"} or {@code "set"} (or the claim script). */
    String claimsFirst() {
        return finishedShare > READ_FIRST ? "get" : "set";
    }

    /** Every claim through the claim script, as on a Redis older than 7.0 (tests of that path). */
    void useScriptClaims() {
        plainClaims = false;
    }

    /** Whether claims start with {@code SET ... NX GET} (false once an older Redis was detected). */
    boolean plainClaims() {
        return plainClaims;
    }

    /** How many of this store's claims are held for their completion (tests). */
    int heldClaims() {
        return held.size();
    }

    /** Shifts this store's estimate of the server clock (tests: a wrong estimate never gives two owners). */
    void skewClock(long millis) {
        clock.skew(millis);
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

    /** {@link RedisStoreConfig#recordKey} as bytes, built in place (it is on every command's path). */
    private byte[] recordKey(ScopeKey key) {
        return scopeKey(key.hash().getBytes(StandardCharsets.US_ASCII), RECORD_KEY_TAIL);
    }

    private byte[] waiterKey(ScopeKey key) {
        return scopeKey(key.hash().getBytes(StandardCharsets.US_ASCII), WAITER_KEY_TAIL);
    }

    /** The record key and the waiter marker's key, as the completion and release scripts take them. */
    private byte[][] scopeKeys(ScopeKey key) {
        byte[] hash = key.hash().getBytes(StandardCharsets.US_ASCII);
        return new byte[][] {scopeKey(hash, RECORD_KEY_TAIL), scopeKey(hash, WAITER_KEY_TAIL)};
    }

    /**
     * A scope's Redis key: the key prefix, an opening brace, {@code hash} (the scope hash's 64 lowercase hex
     * digits) and {@code tail}.
     */
    private byte[] scopeKey(byte[] hash, byte[] tail) {
        byte[] out = new byte[recordKeyHead.length + hash.length + tail.length];
        System.arraycopy(recordKeyHead, 0, out, 0, recordKeyHead.length);
        System.arraycopy(hash, 0, out, recordKeyHead.length, hash.length);
        System.arraycopy(tail, 0, out, recordKeyHead.length + hash.length, tail.length);
        return out;
    }

    private void markWaiting(ScopeKey key) {
        call("subscribe", commands -> await(commands.set(waiterKey(key), WAITER_MARK, WAITER_MARK_ARGS)));
    }

    private static long millis(Duration duration, String name) {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be positive");
        }
        if (duration.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(name + " must be at most " + MAX_DURATION.toDays() + " days");
        }
        long millis = duration.toMillis();
        return duration.equals(Duration.ofMillis(millis)) ? millis : millis + 1;
    }

    /** Waits for a command's answer at most the command timeout and one sweep of {@link CommandDeadlines}. */
    private <T> T await(RedisFuture<T> future) {
        return deadlines.await(future);
    }

    private <T extends @Nullable Object> T call(
            String operation, Function<RedisClusterAsyncCommands<byte[], byte[]>, T> command) {
        Connections open = connections();
        if (clock.claimRefresh()) {
            refreshClock(open.commands());
        }
        try {
            return command.apply(open.commands());
        } catch (RedisException e) {
            throw unavailable(operation, e);
        } catch (IllegalArgumentException | ClassCastException | IndexOutOfBoundsException e) {
            throw new StoreUnavailableException(
                    "unreadable idempotency record in Redis (" + operation + "): " + e.getMessage(), e);
        }
    }

    /** Takes a new sample of the server's clock without waiting for it (see {@link ServerClock}). */
    @SuppressWarnings("FutureReturnValueIgnored") // whenComplete handles the answer and the failure alike
    private void refreshClock(RedisClusterAsyncCommands<byte[], byte[]> commands) {
        long sent = System.nanoTime();
        try {
            // not awaited, so bounded here: a refresh that never ends would keep every later one from starting
            commands.time()
                    .toCompletableFuture()
                    .orTimeout(timeoutNanos, TimeUnit.NANOSECONDS)
                    .whenComplete((time, failure) -> {
                        if (failure != null || time == null || time.size() < 2) {
                            clock.refreshFailed();
                        } else {
                            clock.record(sent, System.nanoTime(), time);
                        }
                    });
        } catch (RuntimeException e) {
            clock.refreshFailed();
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
            if (recent != null
                    && System.nanoTime() - lastConnectFailureNanos
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
            try {
                String server = await(opened.commands().info("server"));
                if (plainClaims && !supportsSetNxGet(server)) {
                    plainClaims = false;
                }
                compareAndSet = supportsSetIfEqual(server);
            } catch (RedisCommandExecutionException refused) {
                // INFO denied (an ACL): the first claim finds out, a refused SET ... NX GET switches to the script;
                // completions keep to the script
            }
            if (!config.evictionAllowed()) {
                refuseEviction(opened);
            }
            if (clock.claimRefresh()) {
                long sent = System.nanoTime();
                try {
                    List<byte[]> time = await(opened.commands().time());
                    clock.record(sent, System.nanoTime(), time);
                } catch (RedisCommandExecutionException refused) {
                    // TIME denied: the local clock stands in; no ownership decision rests on the estimate
                    clock.refreshFailed();
                }
            }
            return opened;
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
    }

    /**
     * Refuses a Redis that evicts keys when its memory is full: its answer to {@code INFO memory}, and in a
     * Cluster every master's, must show no {@code maxmemory} or the {@code noeviction} policy. Such a Redis
     * may drop a finished record under memory pressure, and the retry that record should have answered would
     * run the action again; with {@code noeviction} a full Redis refuses writes instead, and the store fails
     * closed. Checked whenever the store connects (a refusal is retried after the reconnect back-off, so a
     * policy corrected on the server is picked up); a server that denies {@code INFO} is not checked.
     */
    private void refuseEviction(Connections opened) {
        try {
            if (opened.connection() instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) {
                for (RedisClusterNode node : cluster.getPartitions()) {
                    if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                        refuseEviction(
                                await(cluster.getConnection(node.getNodeId())
                                        .async()
                                        .info("memory")),
                                " (Cluster node " + node.getUri().getHost() + ":"
                                        + node.getUri().getPort() + ")");
                    }
                }
            } else {
                refuseEviction(await(opened.commands().info("memory")), "");
            }
        } catch (RedisCommandExecutionException refused) {
            // INFO denied (an ACL): the policy cannot be read here; the README asks for noeviction
        }
    }

    private static void refuseEviction(String info, String where) {
        String policy = evictingPolicy(info);
        if (policy != null) {
            throw new RedisException("Redis" + where + " evicts keys when its memory is full (maxmemory-policy "
                    + policy + "): it could drop a finished record, and the retry that record should answer "
                    + "would run again. Set maxmemory-policy noeviction (a full Redis then refuses writes, and "
                    + "requests fail closed), or allow eviction for a hot tier in front of a durable store "
                    + "(RedisStoreConfig.evictionAllowed)");
        }
    }

    /**
     * The eviction policy named in an {@code INFO memory} answer, if that Redis evicts: a {@code maxmemory}
     * above zero with a policy other than {@code noeviction}; {@code null} otherwise (no limit, no eviction,
     * or the fields missing).
     */
    static @Nullable String evictingPolicy(String info) {
        String maxmemory = null;
        String policy = null;
        for (String line : info.split("\r?\n", -1)) {
            if (line.startsWith("maxmemory:")) {
                maxmemory = line.substring("maxmemory:".length()).strip();
            } else if (line.startsWith("maxmemory_policy:")) {
                policy = line.substring("maxmemory_policy:".length()).strip();
            }
        }
        if (maxmemory == null || policy == null || policy.equals("noeviction")) {
            return null;
        }
        try {
            return Long.parseLong(maxmemory) > 0 ? policy : null;
        } catch (NumberFormatException e) {
            return policy;
        }
    }

    private static Connector standaloneConnector(RedisClient client) {
        Objects.requireNonNull(client, "client");
        return () -> {
            StatefulRedisConnection<byte[], byte[]> connection = client.connect(CODEC);
            return withPubSub(connection, connection.async(), () -> client.connectPubSub(CODEC));
        };
    }

    private static Connector clusterConnector(RedisClusterClient client) {
        Objects.requireNonNull(client, "client");
        return () -> {
            StatefulRedisClusterConnection<byte[], byte[]> connection = client.connect(CODEC);
            return withPubSub(connection, connection.async(), () -> client.connectPubSub(CODEC));
        };
    }

    /**
     * Whether the server that answered {@code INFO server} accepts {@code SET ... NX GET} (Redis 7.0 and
     * later); unknown versions are tried (a refusal switches the store to the claim script).
     */
    static boolean supportsSetNxGet(String info) {
        for (String line : info.split("\r?\n", -1)) {
            if (line.startsWith("redis_version:")) {
                String version = line.substring("redis_version:".length()).strip();
                int dot = version.indexOf('.');
                try {
                    return Integer.parseInt(dot < 0 ? version : version.substring(0, dot)) >= 7;
                } catch (NumberFormatException e) {
                    return true;
                }
            }
        }
        return true;
    }

    /**
     * Whether the server that answered {@code INFO server} accepts {@code SET ... IFEQ}: Valkey 8.1 and later
     * ({@code valkey_version}; Valkey reports {@code redis_version} 7.2.4 for compatibility), or Redis 8.4 and
     * later. Unknown versions are not tried: the script is what every server runs.
     */
    static boolean supportsSetIfEqual(String info) {
        String redis = null;
        for (String line : info.split("\r?\n", -1)) {
            if (line.startsWith("valkey_version:")) {
                return atLeast(line.substring("valkey_version:".length()), 8, 1);
            }
            if (line.startsWith("redis_version:")) {
                redis = line.substring("redis_version:".length());
            }
        }
        return redis != null && atLeast(redis, 8, 4);
    }

    /** Whether a {@code major.minor[.patch]} version is at least {@code major.minor}; false if unreadable. */
    private static boolean atLeast(String version, int major, int minor) {
        String[] parts = version.strip().split("\\.", -1);
        try {
            int actualMajor = Integer.parseInt(parts[0]);
            int actualMinor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
            return actualMajor > major || (actualMajor == major && actualMinor >= minor);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** Whether completions of held claims start with {@code SET ... IFEQ} (tests). */
    boolean compareAndSet() {
        return compareAndSet;
    }

    private static Connections withPubSub(
            StatefulConnection<byte[], byte[]> connection,
            RedisClusterAsyncCommands<byte[], byte[]> commands,
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
            RedisClusterAsyncCommands<byte[], byte[]> commands,
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
