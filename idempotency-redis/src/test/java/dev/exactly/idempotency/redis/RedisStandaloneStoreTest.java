package dev.exactly.idempotency.redis;

import static dev.exactly.idempotency.redis.RedisStoreTestSupport.binaryResponse;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.fingerprint;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.randomKey;
import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The focused store tests on the standalone test Redis. */
class RedisStandaloneStoreTest extends AbstractRedisStoreTest {
    private RedisCommands<String, String> admin;

    /** The port of the server under test. */
    protected int port() {
        return TestRedis.port();
    }

    @BeforeAll
    void connectAdmin() {
        RedisClient client = RedisClient.create(RedisURI.create(TestRedis.host(), port()));
        register(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        StatefulRedisConnection<String, String> connection = register(client.connect());
        admin = connection.sync();
    }

    @Override
    protected RedisIdempotencyStore newStore(RedisStoreConfig config, String clientName) {
        RedisClient client = RedisClient.create(RedisURI.builder()
                .withHost(TestRedis.host())
                .withPort(port())
                .withClientName(clientName)
                .build());
        register(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        return RedisIdempotencyStore.standalone(client, config);
    }

    @Override
    protected RedisClusterCommands<String, String> admin() {
        return admin;
    }

    @Override
    protected void onEveryNode(Consumer<RedisCommands<String, String>> action) {
        action.accept(admin);
    }

    @Override
    protected List<Boolean> scriptsCachedFor(String key, String... sha1s) {
        return admin.scriptExists(sha1s);
    }

    /**
     * Standalone only: one server delivers messages in the order it ran the scripts, so the first message
     * after the unwatched changes tells whether they published anything.
     */
    @Test
    void changesArePublishedOnlyWhileSomebodyWaitsForTheScope() throws InterruptedException {
        RedisClient client = RedisClient.create(RedisURI.create(TestRedis.host(), port()));
        register(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        StatefulRedisPubSubConnection<String, String> pubSub = register(client.connectPubSub());
        BlockingQueue<String> messages = new LinkedBlockingQueue<>();
        pubSub.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                messages.add(message);
            }
        });
        pubSub.sync().subscribe(config.changesChannel());

        ScopeKey completed = randomKey();
        ScopeKey released = randomKey();
        ScopeKey watched = randomKey();
        assertThat(store().complete(completed, claimed(completed), RecordStatus.COMPLETED, binaryResponse()))
                .isTrue();
        assertThat(store().release(released, claimed(released))).isTrue();
        OwnerToken owner = claimed(watched);
        try (ChangeSubscription waiting = waitFor(otherStore(), watched)) {
            assertThat(admin.pttl(config.waiterKey(watched)))
                    .as("the waiter marker, with a TTL")
                    .isBetween(1L, RedisIdempotencyStore.WAITER_MARK_MILLIS);
            assertThat(store().complete(watched, owner, RecordStatus.COMPLETED, binaryResponse()))
                    .isTrue();

            assertThat(messages.poll(5, TimeUnit.SECONDS))
                    .as("the first message is the watched scope's: nothing was published for the others")
                    .isEqualTo(watched.hash());
            assertThat(waiting.await(Duration.ofSeconds(5)))
                    .as("the waiter in the other instance woke")
                    .isTrue();
        }
        assertThat(admin.exists(config.waiterKey(completed), config.waiterKey(released)))
                .isZero();
    }

    @Test
    void aCompletionNobodyWaitsForLooksForNoMarkerAndPublishesNothing() {
        ScopeKey key = randomKey();
        OwnerToken owner = claimed(key);
        admin.configResetstat();

        assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                .isTrue();

        assertThat(commandCalls())
                .as("one SET of the finished value (IFEQ, or inside finish-if-equal.lua after its GET)")
                .containsEntry("set", 1L)
                .doesNotContainKeys("exists", "publish");
        if (!store().compareAndSet()) {
            assertThat(commandCalls())
                    .as("one script call, one GET in it: finish-if-equal.lua found the value held")
                    .containsEntry("evalsha", 1L)
                    .containsEntry("get", 1L);
        }
        ClaimOutcome replay = otherStore().claim(key, fingerprint("a"), LEASE, RETENTION);
        assertThat(replay).isInstanceOf(ClaimOutcome.Finished.class);
        IdempotencyRecord record = ((ClaimOutcome.Finished) replay).record();
        assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(record.owner()).isEqualTo(owner);
        assertThat(Objects.requireNonNull(record.response()).body())
                .isEqualTo(binaryResponse().body());
    }

    @Test
    void aRecordAWaiterTouchedIsCompletedByItsOwnerAndPublished() throws InterruptedException {
        Assumptions.assumeFalse(store().compareAndSet(), "IFEQ's side: ValkeyStoreTest");
        ScopeKey key = randomKey();
        OwnerToken owner = claimed(key);
        try (ChangeSubscription waiting = waitFor(otherStore(), key)) {
            admin.configResetstat();

            assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                    .isTrue();

            assertThat(commandCalls())
                    .as("finish-if-equal.lua found another value than the one held and wrote nothing; then "
                            + "finish.lua: the owner check, the SET, the marker and the message")
                    .containsEntry("evalsha", 2L)
                    .containsEntry("get", 2L)
                    .containsEntry("set", 1L)
                    .containsEntry("exists", 1L)
                    .containsEntry("publish", 1L);
            assertThat(waiting.await(Duration.ofSeconds(5)))
                    .as("the waiter in the other instance woke")
                    .isTrue();
        }
        assertThat(store().find(key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
    }

    @Test
    void aStaleOwnerWhoseValueWasTakenOverWritesNothing() {
        ScopeKey key = randomKey();
        OwnerToken owner = claimed(key);
        String held = admin.get(config.recordKey(key));
        admin.set(
                config.recordKey(key),
                held.replace(owner.value(), OwnerToken.random().value()),
                SetArgs.Builder.keepttl());

        assertThat(store().complete(key, owner, RecordStatus.COMPLETED, binaryResponse()))
                .isFalse();

        assertThat(store().find(key).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);
        assertThat(store().find(key).orElseThrow().owner()).isNotEqualTo(owner);
    }

    protected final RedisCommands<String, String> standaloneAdmin() {
        return admin;
    }

    protected final OwnerToken claimed(ScopeKey key) {
        ClaimOutcome outcome = store().claim(key, fingerprint("a"), LEASE, RETENTION);
        assertThat(outcome).isInstanceOf(ClaimOutcome.Claimed.class);
        return ((ClaimOutcome.Claimed) outcome).owner();
    }

    /** {@code INFO commandstats} as command name to calls (subcommands, e.g. {@code config|resetstat}, left out). */
    protected final Map<String, Long> commandCalls() {
        Map<String, Long> calls = new LinkedHashMap<>();
        for (String line : admin.info("commandstats").split("\r?\n", 0)) {
            if (line.startsWith("cmdstat_") && !line.contains("|")) {
                String name = line.substring("cmdstat_".length(), line.indexOf(':'));
                String stats = line.substring(line.indexOf(':') + 1);
                for (String field : stats.split(",", 0)) {
                    if (field.startsWith("calls=")) {
                        calls.put(name, Long.parseLong(field.substring("calls=".length())));
                    }
                }
            }
        }
        calls.remove("info");
        return calls;
    }
}
