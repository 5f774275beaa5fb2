package dev.exactly.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.ScopeKey;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The focused store tests on a three-master Redis Cluster started for this class. */
class RedisClusterStoreTest extends AbstractRedisStoreTest {
    private RedisClusterFixture cluster;
    private StatefulRedisClusterConnection<String, String> adminConnection;

    @BeforeAll
    void startCluster() {
        cluster = register(RedisClusterFixture.start(3));
        RedisClusterClient client = RedisClusterClient.create(cluster.seeds("exactly-test-admin"));
        register(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        adminConnection = register(client.connect());
    }

    @Override
    protected RedisIdempotencyStore newStore(RedisStoreConfig config, String clientName) {
        RedisClusterClient client = RedisClusterClient.create(cluster.seeds(clientName));
        register(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        return RedisIdempotencyStore.cluster(client, config);
    }

    @Override
    protected RedisClusterCommands<String, String> admin() {
        return adminConnection.sync();
    }

    @Override
    protected void onEveryNode(Consumer<RedisCommands<String, String>> action) {
        cluster.onEveryNode(action);
    }

    @Override
    protected List<Boolean> scriptsCachedFor(String key, String... sha1s) {
        RedisURI node = adminConnection
                .getPartitions()
                .getPartitionBySlot(SlotHash.getSlot(key))
                .getUri();
        AtomicReference<List<Boolean>> cached = new AtomicReference<>();
        RedisClusterFixture.onNode(node.getPort(), commands -> cached.set(commands.scriptExists(sha1s)));
        return cached.get();
    }

    @Test
    void recordsSpreadOverEveryMasterAndEachScopeStaysInOneSlot() {
        Set<String> masters = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            ScopeKey key = RedisStoreTestSupport.randomKey();
            assertThat(store().claim(key, RedisStoreTestSupport.fingerprint("a"), LEASE, RETENTION))
                    .isInstanceOf(ClaimOutcome.Claimed.class);
            String redisKey = config.recordKey(key);
            int slot = SlotHash.getSlot(redisKey);
            assertThat(slot).isEqualTo(SlotHash.getSlot(key.hash()));
            masters.add(adminConnection.getPartitions().getPartitionBySlot(slot).getNodeId());
            assertThat(admin().exists(redisKey)).isEqualTo(1);
        }
        assertThat(masters).as("30 random scopes land on all three masters").hasSize(3);
    }

    @Test
    void theConvenienceFactoryReadsAClusterUri() {
        try (RedisIdempotencyStore fromUri = RedisIdempotencyStore.create(cluster.uri(), config)) {
            ScopeKey key = RedisStoreTestSupport.randomKey();
            ClaimOutcome outcome = fromUri.claim(key, RedisStoreTestSupport.fingerprint("a"), LEASE, RETENTION);
            assertThat(outcome).isInstanceOf(ClaimOutcome.Claimed.class);
            assertThat(store().find(key)).contains(outcome.record());
            assertThat(fromUri.toString()).contains("cluster");
        }
    }

    @Test
    void theStoresOwnClientCarriesEveryNodesConnectionOnOneEventLoopAndStopsItWhenClosed() {
        Set<Thread> before = lettuceEventLoops();
        Set<Thread> loops = new HashSet<>();
        try (RedisIdempotencyStore own = RedisIdempotencyStore.create(cluster.uri(), config)) {
            Set<String> masters = new HashSet<>();
            for (int i = 0; i < 30; i++) {
                ScopeKey key = RedisStoreTestSupport.randomKey();
                ClaimOutcome outcome = own.claim(key, RedisStoreTestSupport.fingerprint("a"), LEASE, RETENTION);
                assertThat(outcome).isInstanceOf(ClaimOutcome.Claimed.class);
                assertThat(own.release(key, outcome.record().owner())).isTrue();
                masters.add(adminConnection
                        .getPartitions()
                        .getPartitionBySlot(SlotHash.getSlot(key.hash()))
                        .getNodeId());
            }
            assertThat(masters).as("the store talked to every master").hasSize(3);
            loops.addAll(lettuceEventLoops());
            loops.removeAll(before);
            // Lettuce's own resources give a client one loop per core, at least two, and spread the nodes over them
            assertThat(loops).as("the event loops the store's client started").hasSize(1);
        }
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(
                        () -> assertThat(loops).as("its loop, after close").noneMatch(Thread::isAlive));
    }

    private static Set<Thread> lettuceEventLoops() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("lettuce-") && t.getName().contains("EventLoop"))
                .collect(Collectors.toSet());
    }
}
