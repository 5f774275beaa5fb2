package dev.exactly.idempotency.redis;

import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.tck.IdempotencyStoreContract;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store contract on a three-master Redis Cluster started for this class on loopback ports, through
 * a {@code redis-cluster://} URI. Skipped without {@code redis-server} on the PATH, unless {@code CI=true}.
 */
class RedisClusterContractTest extends IdempotencyStoreContract {
    private static RedisClusterFixture cluster;
    private static RedisStoreConfig config;
    private static RedisIdempotencyStore store;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterFixture.start(3);
        config = RedisStoreConfig.custom()
                .keyPrefix(RedisStoreTestSupport.uniquePrefix())
                .build();
        store = RedisIdempotencyStore.create(cluster.uri(), config);
    }

    @AfterAll
    static void stopCluster() {
        try {
            if (store != null) {
                store.close();
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    @Override
    protected IdempotencyStore createStore() {
        return store;
    }

    /** Another process's view: its own client, connections and subscription; the suite closes it. */
    @Override
    protected Optional<IdempotencyStore> createPeerStore() {
        return Optional.of(RedisIdempotencyStore.create(cluster.uri(), config));
    }
}
