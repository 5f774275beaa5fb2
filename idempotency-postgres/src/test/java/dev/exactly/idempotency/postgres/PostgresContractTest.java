package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.tck.IdempotencyStoreContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The PostgreSQL store passes the store contract, on a pool as applications run it. */
class PostgresContractTest extends IdempotencyStoreContract {
    private static TestDatabase database;
    private static PostgresIdempotencyStore store;

    @BeforeAll
    static void start() {
        database = TestDatabase.create("idem", 16);
        store = PostgresIdempotencyStore.create(database.pool());
    }

    @AfterAll
    static void stop() {
        store.close();
        database.close();
    }

    @Override
    protected IdempotencyStore createStore() {
        return store;
    }

    /** Another instance on the same table: its own listener connection, as another process has. */
    @Override
    protected java.util.Optional<IdempotencyStore> createPeerStore() {
        return java.util.Optional.of(PostgresIdempotencyStore.create(database.pool()));
    }
}
