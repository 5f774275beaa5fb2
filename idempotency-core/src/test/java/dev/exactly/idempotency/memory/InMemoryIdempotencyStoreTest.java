package dev.exactly.idempotency.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.MutableClock;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
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
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("full");
        // an existing key is still answered when full
        assertThat(store.claim(key(0), fp, Duration.ofSeconds(1), Duration.ofMinutes(1)))
                .isInstanceOf(ClaimOutcome.InFlight.class);
    }

    @Test
    void aStoreFullOfLiveRecordsRefusesWithoutReadingThemUntilTheEarliestExpires() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(clock, 3);
        store.claim(key(0), fp, Duration.ofSeconds(1), Duration.ofMinutes(10));
        store.claim(key(1), fp, Duration.ofSeconds(1), Duration.ofMinutes(5)); // the earliest
        store.claim(key(2), fp, Duration.ofSeconds(1), Duration.ofMinutes(10));
        for (int i = 0; i < 20; i++) {
            clock.advance(Duration.ofSeconds(10));
            assertThatThrownBy(() -> store.claim(key(3), fp, Duration.ofSeconds(1), Duration.ofMinutes(10)))
                    .isInstanceOf(StoreUnavailableException.class);
        }
        assertThat(store.sweeps()).as("nothing could have expired: no sweep").isZero();
        clock.advance(Duration.ofMinutes(2)); // 5 minutes 20 s after the claims: key 1 expired
        assertThat(store.claim(key(3), fp, Duration.ofSeconds(1), Duration.ofMinutes(10)))
                .isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(store.sweeps()).isEqualTo(1);
        assertThat(store.find(key(1))).isEmpty();
        assertThat(store.find(key(0))).isPresent();
        // full again; the earliest expiry is now key 0's, 10 minutes after the first claims
        assertThatThrownBy(() -> store.claim(key(4), fp, Duration.ofSeconds(1), Duration.ofMinutes(10)))
                .isInstanceOf(StoreUnavailableException.class);
        assertThat(store.sweeps()).isEqualTo(1);
    }

    @Test
    void aRecordCreatedWithAnEarlierExpiryThanTheRestIsPurgedWhenItExpires() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(clock, 2);
        store.claim(key(0), fp, Duration.ofSeconds(1), Duration.ofHours(1));
        store.claim(key(1), fp, Duration.ofSeconds(1), Duration.ofSeconds(30)); // created last, expires first
        clock.advance(Duration.ofSeconds(30));
        assertThat(store.claim(key(2), fp, Duration.ofSeconds(1), Duration.ofHours(1)))
                .isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(store.find(key(1))).isEmpty();
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

    @Test
    void aHotTierEvictsTheOldestFinishedRecordsAndNeverAProcessingOne() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
                .clock(clock)
                .maxEntries(3)
                .whenFull(InMemoryIdempotencyStore.WhenFull.EVICT_FINISHED)
                .build();
        OwnerToken[] owners = new OwnerToken[3];
        for (int i = 0; i < 3; i++) {
            owners[i] = ((ClaimOutcome.Claimed) store.claim(key(i), fp, Duration.ofSeconds(1), Duration.ofHours(1)))
                    .owner();
        }
        // finished in the order 2, 0; key 1 stays processing
        assertThat(store.complete(key(2), owners[2], RecordStatus.COMPLETED, StoredResponse.of(201, new byte[0])))
                .isTrue();
        clock.advance(Duration.ofMillis(1));
        assertThat(store.complete(key(0), owners[0], RecordStatus.COMPLETED, StoredResponse.of(201, new byte[0])))
                .isTrue();

        assertThat(store.claim(key(3), fp, Duration.ofSeconds(1), Duration.ofHours(1)))
                .isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(store.find(key(2)))
                .as("the oldest finished record goes first")
                .isEmpty();
        assertThat(store.find(key(0))).isPresent();
        assertThat(store.claim(key(4), fp, Duration.ofSeconds(1), Duration.ofHours(1)))
                .isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(store.find(key(0))).isEmpty();
        assertThat(store.find(key(1)).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);

        // now only processing records are left: the store refuses, and says so
        assertThatThrownBy(() -> store.claim(key(5), fp, Duration.ofSeconds(1), Duration.ofHours(1)))
                .isInstanceOfSatisfying(StoreUnavailableException.class, e -> {
                    assertThat(e).hasMessageContaining("in-flight");
                    assertThat(e.mayHaveApplied()).isFalse();
                });
        InMemoryIdempotencyStore.Stats stats = store.stats();
        assertThat(stats.evictions()).isEqualTo(2);
        assertThat(stats.refusals()).isEqualTo(1);
        assertThat(stats.lastRefusalAt()).isEqualTo(clock.instant());
        assertThat(stats.size()).isEqualTo(3);
        assertThat(stats.refusing()).isTrue();

        // a request in flight finishes: its record can go, and the store takes new keys again
        assertThat(store.complete(key(1), owners[1], RecordStatus.COMPLETED, StoredResponse.of(201, new byte[0])))
                .isTrue();
        assertThat(store.claim(key(6), fp, Duration.ofSeconds(1), Duration.ofHours(1)))
                .isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(store.stats().refusing()).isFalse();
    }

    @Test
    void theEvictionOrderForgetsRecordsThatAreGoneAndStaysBounded() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
                .clock(clock)
                .maxEntries(10)
                .whenFull(InMemoryIdempotencyStore.WhenFull.EVICT_FINISHED)
                .build();
        for (int i = 0; i < 1_000; i++) {
            OwnerToken owner = ((ClaimOutcome.Claimed)
                            store.claim(key(i), fp, Duration.ofSeconds(1), Duration.ofSeconds(2)))
                    .owner();
            store.complete(key(i), owner, RecordStatus.COMPLETED, StoredResponse.of(200, new byte[0]));
            clock.advance(Duration.ofMillis(500));
        }
        // every record finished and most expired; a full store still takes new keys by eviction
        assertThat(store.size()).isLessThanOrEqualTo(10);
        assertThat(store.stats().refusals()).isZero();
    }

    @Test
    void aStoreThatRefusesWhenFullReportsItsRefusals() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(clock, 1);
        store.claim(key(0), fp, Duration.ofSeconds(1), Duration.ofMinutes(1));
        assertThatThrownBy(() -> store.claim(key(1), fp, Duration.ofSeconds(1), Duration.ofMinutes(1)))
                .isInstanceOf(StoreUnavailableException.class);
        assertThat(store.stats().refusals()).isEqualTo(1);
        assertThat(store.stats().evictions()).isZero();
        assertThat(store.stats().whenFull()).isEqualTo(InMemoryIdempotencyStore.WhenFull.REFUSE);
    }

    @Test
    void aClaimTakesTheTokenItIsGiven() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(clock, 10);
        OwnerToken mine = OwnerToken.random();
        ClaimOutcome outcome = store.claim(key(0), fp, mine, Duration.ofSeconds(1), Duration.ofMinutes(1));
        assertThat(((ClaimOutcome.Claimed) outcome).owner()).isEqualTo(mine);
        assertThat(store.release(key(0), mine)).isTrue();
    }
}
