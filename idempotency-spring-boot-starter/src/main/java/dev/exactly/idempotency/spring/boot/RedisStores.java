package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.util.ClassUtils;

/** Builds the Redis store from properties. Loaded only when the Redis module is on the class path. */
final class RedisStores {
    private RedisStores() {}

    static RedisStoreConfig config(IdempotencyProperties.Redis redis) {
        try {
            return RedisStoreConfig.custom()
                    .keyPrefix(redis.getKeyPrefix())
                    .commandTimeout(redis.getCommandTimeout())
                    .connectTimeout(redis.getConnectTimeout())
                    .evictionAllowed(redis.isEvictionAllowed())
                    .build();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException(PropertiesReader.P + "redis: " + e.getMessage(), e);
        }
    }

    /**
     * A store with its own client (connected on first use, so startup does not need Redis up): on
     * {@code redis.uri} when it is set, else on Spring Boot's Redis connection details.
     */
    static RedisIdempotencyStore create(IdempotencyProperties.Redis redis, ListableBeanFactory beans) {
        String uri = redis.getUri();
        if (uri == null || uri.isBlank()) {
            ClassLoader loader = beans instanceof ConfigurableBeanFactory factory ? factory.getBeanClassLoader() : null;
            if (!ClassUtils.isPresent(DataRedisConnections.DETAILS_CLASS, loader)) {
                throw new InvalidIdempotencyPropertiesException(java.util.List.of(PropertiesReader.redisUriMissing()));
            }
            return DataRedisConnections.create(beans, config(redis));
        }
        try {
            return RedisIdempotencyStore.create(uri, config(redis));
        } catch (IllegalArgumentException e) {
            throw new InvalidIdempotencyPropertiesException(java.util.List.of(
                    PropertiesReader.P + "redis.uri is not a Redis connection string: " + e.getMessage()));
        }
    }
}
