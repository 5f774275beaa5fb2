package dev.exactly.idempotency.redis;

import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.tck.IdempotencyStoreContract;
import dev.exactly.testing.TestRedis;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store contract with every claim through the claim script, as the store runs on a Redis older
 * than 7.0 (which refuses {@code SET ... NX GET}).
 */
class RedisScriptClaimContractTest extends IdempotencyStoreContract {
    private static RedisStoreConfig config;
    private static RedisIdempotencyStore store;

    @BeforeAll
    static void openStore() {
        config = RedisStoreConfig.custom()
                .keyPrefix(RedisStoreTestSupport.uniquePrefix())
                .build();
        store = scripted();
    }

    @AfterAll
    static void closeStore() {
        store.close();
    }

    private static RedisIdempotencyStore scripted() {
        RedisIdempotencyStore scripted = RedisIdempotencyStore.create(TestRedis.uri(), config);
        scripted.useScriptClaims();
        return scripted;
    }

    @Override
    protected IdempotencyStore createStore() {
        return store;
    }

    @Override
    protected Optional<IdempotencyStore> createPeerStore() {
        return Optional.of(scripted());
    }
}
