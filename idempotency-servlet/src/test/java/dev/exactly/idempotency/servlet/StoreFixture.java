package dev.exactly.idempotency.servlet;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.testing.TestPostgres;
import dev.exactly.testing.TestRedis;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

/** A store the HTTP suite runs against, with whatever it needs closed afterwards. */
public record StoreFixture(String name, Supplier<Opened> opener) {

    /** An opened store; closing it closes the store and then its resources. */
    public record Opened(IdempotencyStore store, AutoCloseable resources) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            try {
                store.close();
            } finally {
                resources.close();
            }
        }
    }

    public static List<StoreFixture> all() {
        return List.of(memory(), redis(), postgres());
    }

    static StoreFixture memory() {
        return new StoreFixture("memory", () -> new Opened(InMemoryIdempotencyStore.create(), () -> {}));
    }

    static StoreFixture redis() {
        return new StoreFixture("redis", () -> {
            // a prefix of its own, so that runs never see each other's keys
            RedisStoreConfig config = RedisStoreConfig.custom()
                    .keyPrefix("exactly:servlet-test:" + UUID.randomUUID() + ":")
                    .build();
            return new Opened(RedisIdempotencyStore.create(TestRedis.uri(), config), () -> {});
        });
    }

    static StoreFixture postgres() {
        return new StoreFixture("postgres", () -> {
            HikariConfig config = new HikariConfig();
            config.setDataSource(TestPostgres.freshSchema("servlet_http"));
            config.setMaximumPoolSize(16);
            config.setPoolName("servlet-http");
            HikariDataSource pool = new HikariDataSource(config);
            PostgresIdempotencyStore.migrate(pool);
            return new Opened(PostgresIdempotencyStore.create(pool), pool);
        });
    }

    @Override
    public String toString() {
        return name;
    }
}
