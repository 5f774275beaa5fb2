package dev.exactly.idempotency.tck;

import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.time.Duration;

/**
 * The contract run against a deliberately broken store whose renew answers the owner with {@code true}
 * but extends nothing. Not run directly (no Test suffix); {@link ContractCatchesBrokenStoresTest} runs
 * it and expects the keep-alive test to fail.
 */
class IgnoredRenewalStoreContract extends IdempotencyStoreContract {

    @Override
    protected IdempotencyStore createStore() {
        InMemoryIdempotencyStore memory = InMemoryIdempotencyStore.create();
        return new ForwardingIdempotencyStore(memory) {
            @Override
            public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
                return delegate()
                        .find(key)
                        .map(r -> owner.equals(r.owner()) && !r.status().isFinished())
                        .orElse(false);
            }
        };
    }
}
