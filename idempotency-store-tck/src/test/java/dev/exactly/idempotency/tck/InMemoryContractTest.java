package dev.exactly.idempotency.tck;

import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;

/** The in-memory store passes the contract. */
class InMemoryContractTest extends IdempotencyStoreContract {
    private static final InMemoryIdempotencyStore STORE = InMemoryIdempotencyStore.create();

    @Override
    protected IdempotencyStore createStore() {
        return STORE;
    }
}
