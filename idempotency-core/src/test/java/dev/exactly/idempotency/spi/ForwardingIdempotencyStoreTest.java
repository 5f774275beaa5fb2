package dev.exactly.idempotency.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ForwardingIdempotencyStoreTest {
    private static final ScopeKey KEY =
            new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("k-1")).toScopeKey();
    private static final Fingerprint FINGERPRINT = new Fingerprint("sha256-jcs", "abc");

    /** Forwards to whichever store it was last pointed at. */
    private static final class Switching extends ForwardingIdempotencyStore {
        private volatile IdempotencyStore target;

        Switching(IdempotencyStore first) {
            super(first);
            target = first;
        }

        @Override
        protected IdempotencyStore delegate() {
            return target;
        }
    }

    @Test
    void everyCallGoesToTheStoreDelegateReturnsAtThatCall() {
        InMemoryIdempotencyStore first = InMemoryIdempotencyStore.create();
        InMemoryIdempotencyStore second = InMemoryIdempotencyStore.create();
        Switching store = new Switching(first);
        OwnerToken owner = OwnerToken.random();
        assertThat(store.claim(KEY, FINGERPRINT, owner, Duration.ofSeconds(30), Duration.ofHours(1)))
                .isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(first.find(KEY)).isPresent();

        store.target = second;
        assertThat(store.find(KEY))
                .as("the second store has no record of the key")
                .isEmpty();
        assertThat(store.complete(
                        KEY,
                        owner,
                        RecordStatus.COMPLETED,
                        StoredResponse.of(201, "{}".getBytes(StandardCharsets.UTF_8))))
                .isFalse();
        assertThat(store.claim(KEY, FINGERPRINT, OwnerToken.random(), Duration.ofSeconds(30), Duration.ofHours(1)))
                .isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(second.find(KEY)).isPresent();
        assertThat(first.find(KEY).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);
    }
}
