package dev.exactly.idempotency.redis;

import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.tck.IdempotencyStoreContract;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The store contract on a server with compare-and-set, where completions of held claims are a plain {@code SET ... IFEQ}. */
class ValkeyContractTest extends IdempotencyStoreContract {
    private static RedisStoreConfig config;
    private static RedisIdempotencyStore store;

    @BeforeAll
    static void openStore() {
        config = RedisStoreConfig.custom()
                .keyPrefix(RedisStoreTestSupport.uniquePrefix())
                .build();
        store = RedisIdempotencyStore.create(TestValkey.uri(), config);
    }

    @AfterAll
    static void closeStore() {
        if (store != null) {
            store.close();
        }
    }

    @Override
    protected IdempotencyStore createStore() {
        return store;
    }

    @Override
    protected Optional<IdempotencyStore> createPeerStore() {
        return Optional.of(RedisIdempotencyStore.create(TestValkey.uri(), config));
    }
}
