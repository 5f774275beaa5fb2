package dev.exactly.idempotency.tck;

import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.util.Optional;

/** The in-memory store passes the contract. */
class InMemoryContractTest extends IdempotencyStoreContract {
    private static final InMemoryIdempotencyStore STORE = InMemoryIdempotencyStore.create();

    @Override
    protected IdempotencyStore createStore() {
        return STORE;
    }

    /** Memory is one process: its "other instance" is another engine on the same map. */
    @Override
    protected Optional<IdempotencyStore> createPeerStore() {
        return Optional.of(new ForwardingIdempotencyStore(STORE) {
            @Override
            public void close() {
                // the shared store outlives the peer view
            }
        });
    }
}
