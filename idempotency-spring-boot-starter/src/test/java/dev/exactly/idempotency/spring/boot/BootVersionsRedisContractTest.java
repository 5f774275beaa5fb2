package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.tck.IdempotencyStoreContract;
import dev.exactly.testing.TestRedis;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The Redis store passes the store contract on the Lettuce (and Netty, Reactor) that Spring Boot manages
 * ({@link BootManagedVersionsTest}), not only on the one its own module is built with.
 */
class BootVersionsRedisContractTest extends IdempotencyStoreContract {
    private static RedisStoreConfig config;
    private static RedisIdempotencyStore store;

    @BeforeAll
    static void openStore() {
        config = RedisStoreConfig.custom()
                .keyPrefix("exactly:boot-tck:" + UUID.randomUUID() + ":")
                .build();
        store = RedisIdempotencyStore.create(TestRedis.uri(), config);
    }

    @AfterAll
    static void closeStore() {
        store.close();
    }

    @Override
    protected IdempotencyStore createStore() {
        return store;
    }

    @Override
    protected Optional<IdempotencyStore> createPeerStore() {
        return Optional.of(RedisIdempotencyStore.create(TestRedis.uri(), config));
    }
}
