package dev.exactly.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Redis that evicts keys when its memory is full may drop a finished record, and the retry that record
 * should answer runs the action again. The store refuses such a Redis (every call fails closed, naming the
 * setting) unless eviction is allowed; a Redis with {@code noeviction} that fills up refuses writes, and the
 * store fails closed. A Redis of this class's own, its settings changed per test with {@code CONFIG SET}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisEvictionTest {
    private static final IdempotencyPolicy POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30))
            .retention(Duration.ofMinutes(10))
            .build();
    private static final StoredResponse CREATED =
            StoredResponse.of(201, "{\"id\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8));

    private RedisProcess redis;
    private RedisClient adminClient;
    private StatefulRedisConnection<String, String> admin;
    private final List<RedisIdempotencyStore> stores = new ArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();

    @BeforeAll
    void startOwnRedis(@TempDir Path workDir) {
        redis = RedisProcess.start(TestRedis.redisServerBinary(workDir), TestRedis.freePort(), List.of());
        adminClient = RedisClient.create(RedisURI.create(TestRedis.host(), redis.port()));
        admin = adminClient.connect();
    }

    @AfterAll
    void stopOwnRedis() {
        admin.close();
        adminClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        redis.stop();
    }

    @AfterEach
    void reset() {
        stores.forEach(RedisIdempotencyStore::close);
        stores.clear();
        runs.set(0);
        RedisCommands<String, String> commands = admin.sync();
        commands.configSet("maxmemory", "0");
        commands.configSet("maxmemory-policy", "noeviction");
        commands.flushall();
    }

    private IdempotencyEngine engine(boolean evictionAllowed) {
        RedisIdempotencyStore store = RedisIdempotencyStore.create(
                "redis://127.0.0.1:" + redis.port(),
                RedisStoreConfig.custom()
                        .keyPrefix(RedisStoreTestSupport.uniquePrefix())
                        .commandTimeout(Duration.ofSeconds(2))
                        .evictionAllowed(evictionAllowed)
                        .build());
        stores.add(store);
        return IdempotencyEngine.builder(store).build();
    }

    private IdempotentResult execute(IdempotencyEngine engine, String key) throws Exception {
        IdempotencyRequest request = IdempotencyRequest.of(
                new Scope("acme", "POST", "/v1/charges", new IdempotencyKey(key)),
                new Fingerprint("sha256-jcs", "f-" + key),
                POLICY);
        return engine.execute(request, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(CREATED);
        });
    }

    private void limit(String maxmemory, String policy) {
        admin.sync().configSet("maxmemory", maxmemory);
        admin.sync().configSet("maxmemory-policy", policy);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "allkeys-lru",
                "allkeys-lfu",
                "allkeys-random",
                "volatile-lru",
                "volatile-lfu",
                "volatile-random",
                "volatile-ttl"
            })
    void aRedisThatEvictsIsRefusedAndNothingRuns(String policy) {
        limit("512mb", policy);
        IdempotencyEngine engine = engine(false);
        assertThatThrownBy(() -> execute(engine, "k-" + policy))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("maxmemory-policy " + policy)
                .hasMessageContaining("noeviction")
                .hasMessageContaining("evictionAllowed");
        assertThat(runs).as("the action did not run").hasValue(0);
    }

    @Test
    void aRedisWithoutALimitOrWithNoevictionIsAccepted() throws Exception {
        limit("0", "allkeys-lru"); // no limit: nothing is evicted, whatever the policy
        assertThat(execute(engine(false), "unlimited").kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        limit("512mb", "noeviction");
        assertThat(execute(engine(false), "noeviction").kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(runs).hasValue(2);
    }

    @Test
    void aPolicyCorrectedOnTheServerIsPickedUpWithoutARestart() {
        limit("512mb", "allkeys-lru");
        IdempotencyEngine engine = engine(false);
        assertThatThrownBy(() -> execute(engine, "corrected")).isInstanceOf(StoreUnavailableException.class);
        limit("512mb", "noeviction");
        IdempotentResult result = await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(100))
                .ignoreException(StoreUnavailableException.class)
                .until(() -> execute(engine, "corrected"), r -> r != null);
        assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(runs).hasValue(1);
    }

    @Test
    void evictionAllowedRunsOnARedisThatEvicts() throws Exception {
        limit("512mb", "allkeys-lru");
        assertThat(execute(engine(true), "hot-tier").kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(runs).hasValue(1);
    }

    @Test
    void aFullNoevictionRedisFailsClosedAndNeverRunsARetryAgain() throws Exception {
        IdempotencyEngine engine = engine(false);
        assertThat(execute(engine, "before-full").kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        limit("1", "noeviction"); // below what it holds already: every write is refused, as in a full Redis
        assertThatThrownBy(() -> execute(engine, "after-full")).isInstanceOf(StoreUnavailableException.class);
        assertThatThrownBy(() -> execute(engine, "before-full")).isInstanceOf(StoreUnavailableException.class);
        assertThat(runs).as("neither a new key nor the retry ran").hasValue(1);
        limit("0", "noeviction");
        assertThat(execute(engine, "before-full").kind())
                .as("its record kept")
                .isEqualTo(IdempotentResult.Kind.REPLAYED);
    }

    @Test
    void everyClusterMasterIsChecked() {
        try (RedisClusterFixture cluster = RedisClusterFixture.start(3)) {
            int evicting = cluster.ports().getLast();
            RedisClusterFixture.onNode(evicting, node -> {
                node.configSet("maxmemory", "512mb");
                node.configSet("maxmemory-policy", "volatile-lru");
            });
            RedisClusterClient client = RedisClusterClient.create(cluster.seeds("eviction-test"));
            try (RedisIdempotencyStore store = RedisIdempotencyStore.cluster(
                    client,
                    RedisStoreConfig.custom()
                            .keyPrefix(RedisStoreTestSupport.uniquePrefix())
                            .build())) {
                IdempotencyEngine engine = IdempotencyEngine.builder(store).build();
                assertThatThrownBy(() -> execute(engine, "cluster"))
                        .isInstanceOf(StoreUnavailableException.class)
                        .hasMessageContaining("maxmemory-policy volatile-lru")
                        .hasMessageContaining(":" + evicting + ")");
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            assertThat(runs).hasValue(0);
        }
    }
}
