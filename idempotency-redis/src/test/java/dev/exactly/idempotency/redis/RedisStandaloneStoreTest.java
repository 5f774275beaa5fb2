package dev.exactly.idempotency.redis;

import dev.exactly.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;

/** The focused store tests on the standalone test Redis. */
class RedisStandaloneStoreTest extends AbstractRedisStoreTest {
    private RedisCommands<String, String> admin;

    @BeforeAll
    void connectAdmin() {
        RedisClient client = RedisClient.create(RedisURI.create(TestRedis.host(), TestRedis.port()));
        register(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        StatefulRedisConnection<String, String> connection = register(client.connect());
        admin = connection.sync();
    }

    @Override
    protected RedisIdempotencyStore newStore(RedisStoreConfig config, String clientName) {
        RedisClient client = RedisClient.create(RedisURI.builder()
                .withHost(TestRedis.host())
                .withPort(TestRedis.port())
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
}
