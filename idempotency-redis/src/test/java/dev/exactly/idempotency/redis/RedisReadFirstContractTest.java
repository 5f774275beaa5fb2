package dev.exactly.idempotency.redis;

import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.tck.IdempotencyStoreContract;
import dev.exactly.testing.TestRedis;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store contract with every claim reading first ({@code GET}, then the claim for a key without a finished
 * record), as the store claims while most keys it sees are replays.
 */
class RedisReadFirstContractTest extends IdempotencyStoreContract {
    private static RedisStoreConfig config;
    private static RedisIdempotencyStore store;

    @BeforeAll
    static void openStore() {
        config = RedisStoreConfig.custom()
                .keyPrefix(RedisStoreTestSupport.uniquePrefix())
                .build();
        store = readingFirst();
    }

    @AfterAll
    static void closeStore() {
        store.close();
    }

    private static RedisIdempotencyStore readingFirst() {
        RedisIdempotencyStore reading = RedisIdempotencyStore.create(TestRedis.uri(), config);
        reading.claimFirst("get", true);
        return reading;
    }

    @Override
    protected IdempotencyStore createStore() {
        return store;
    }

    @Override
    protected Optional<IdempotencyStore> createPeerStore() {
        return Optional.of(readingFirst());
    }
}
