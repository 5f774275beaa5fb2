package dev.exactly.idempotency.spring.boot;

import dev.exactly.testing.TestRedis;
import java.util.UUID;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The HTTP contract on the Redis store, under a key prefix of its own. */
class RedisStoreHttpTest extends HttpContractTest {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("exactly.idempotency.store", () -> "redis");
        registry.add("exactly.idempotency.redis.uri", TestRedis::uri);
        registry.add("exactly.idempotency.redis.key-prefix", () -> "starter-test:" + UUID.randomUUID() + ":");
    }

    @Override
    String storeName() {
        return "RedisIdempotencyStore";
    }
}
