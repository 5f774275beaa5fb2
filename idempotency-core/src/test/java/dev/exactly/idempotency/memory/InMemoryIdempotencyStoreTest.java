package dev.exactly.idempotency.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.MutableClock;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class InMemoryIdempotencyStoreTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-03-01T10:00:00Z"));
    private final Fingerprint fp = new Fingerprint("sha256-jcs", "f");

    private static ScopeKey key(int i) {
        return new Scope("t", "POST", "/r", new IdempotencyKey("k" + i)).toScopeKey();
    }

    @Test
    void aFullStoreFailsClosedInsteadOfEvictingLiveRecords() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(clock, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(store.claim(key(i), fp, Duration.ofSeconds(1), Duration.ofMinutes(1)))
                    .isInstanceOf(ClaimOutcome.Claimed.class);
        }
        assertThatThrownBy(() -> store.claim(key(3), fp, Duration.ofSeconds(1), Duration.ofMinutes(1)))
                .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("full");
        // an existing key is still answered when full
        assertThat(store.claim(key(0), fp, Duration.ofSeconds(1), Duration.ofMinutes(1)))
                .isInstanceOf(ClaimOutcome.InFlight.class);
    }

    @Test
    void expiredRecordsMakeRoom() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(clock, 2);
        store.claim(key(0), fp, Duration.ofSeconds(1), Duration.ofSeconds(10));
        store.claim(key(1), fp, Duration.ofSeconds(1), Duration.ofSeconds(10));
        clock.advance(Duration.ofSeconds(10));
        assertThat(store.claim(key(2), fp, Duration.ofSeconds(1), Duration.ofSeconds(10)))
                .isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void purgeRemovesOnlyExpiredRecords() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(clock, 10);
        store.claim(key(0), fp, Duration.ofSeconds(1), Duration.ofSeconds(5));
        store.claim(key(1), fp, Duration.ofSeconds(1), Duration.ofSeconds(50));
        clock.advance(Duration.ofSeconds(5));
        assertThat(store.purgeExpired()).isEqualTo(1);
        assertThat(store.find(key(0))).isEmpty();
        assertThat(store.find(key(1))).isPresent();
    }
}
