package dev.exactly.idempotency.spring.boot;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresSchema;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.tck.IdempotencyStoreContract;
import dev.exactly.testing.TestPostgres;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The PostgreSQL store passes the store contract on the JDBC driver and HikariCP that Spring Boot
 * manages ({@link BootManagedVersionsTest}), not only on the ones its own module is built with.
 */
class BootVersionsPostgresContractTest extends IdempotencyStoreContract {
    private static HikariDataSource pool;
    private static PostgresIdempotencyStore store;

    @BeforeAll
    static void openStore() {
        HikariConfig config = new HikariConfig();
        config.setDataSource(TestPostgres.freshSchema("starter_tck"));
        config.setMaximumPoolSize(16);
        pool = new HikariDataSource(config);
        PostgresSchema.migrate(pool);
        store = PostgresIdempotencyStore.create(pool);
    }

    @AfterAll
    static void closeStore() {
        store.close();
        pool.close();
    }

    @Override
    protected IdempotencyStore createStore() {
        return store;
    }

    @Override
    protected Optional<IdempotencyStore> createPeerStore() {
        return Optional.of(PostgresIdempotencyStore.create(pool));
    }
}
