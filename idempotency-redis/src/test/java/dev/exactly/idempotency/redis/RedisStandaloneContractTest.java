package dev.exactly.idempotency.redis;

import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.tck.IdempotencyStoreContract;
import dev.exactly.testing.TestRedis;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The store contract on the standalone test Redis, through {@link RedisIdempotencyStore#create(String, RedisStoreConfig)}. */
class RedisStandaloneContractTest extends IdempotencyStoreContract {
    private static RedisStoreConfig config;
    private static RedisIdempotencyStore store;

    @BeforeAll
    static void openStore() {
        config = RedisStoreConfig.custom()
                .keyPrefix(RedisStoreTestSupport.uniquePrefix())
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

    /** Another process's view: its own client, connections and subscription; the suite closes it. */
    @Override
    protected Optional<IdempotencyStore> createPeerStore() {
        return Optional.of(RedisIdempotencyStore.create(TestRedis.uri(), config));
    }
}
