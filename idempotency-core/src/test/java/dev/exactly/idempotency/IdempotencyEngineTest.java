package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class IdempotencyEngineTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-03-01T10:00:00Z"));
    private final InMemoryIdempotencyStore memory = InMemoryIdempotencyStore.create(clock, 100);
    private final FlakyStore store = new FlakyStore(memory);
    private final RecordingListener events = new RecordingListener();
    private final IdempotencyEngine engine =
            IdempotencyEngine.builder(store).clock(clock).listener(events).build();
    private final IdempotencyRequest request = IdempotencyRequest.of(
            new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("k-1")),
            new Fingerprint("sha256-jcs", "abc"),
            IdempotencyPolicy.custom()
                    .lease(Duration.ofSeconds(5))
                    .retention(Duration.ofHours(1))
                    .build());
    private final StoredResponse created = StoredResponse.of(201, "{\"id\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8));

    @Test
    void failsClosedWhenTheStoreThrows() {
        store.failing = new IllegalStateException("connection reset");
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> engine.execute(request, lease -> {
                    runs.incrementAndGet();
                    return Outcome.complete(created);
                }))
                .isInstanceOfSatisfying(StoreUnavailableException.class, e -> {
                    assertThat(e.code()).isEqualTo("idempotency_store_unavailable");
                    assertThat(e.getCause()).hasMessage("connection reset");
                });
        assertThat(runs).hasValue(0);
        assertThat(events.events).containsExactly("storeError");
    }

    @Test
    void storeUnavailableIsPassedThroughAsIs() {
        StoreUnavailableException down = new StoreUnavailableException("redis down", null);
        store.failing = down;
        assertThatThrownBy(() -> engine.execute(request, lease -> Outcome.complete(created)))
                .isSameAs(down);
    }

    @Test
    void anActionThatThrowsReleasesTheKey() throws Exception {
        assertThatThrownBy(() -> engine.execute(request, lease -> {
                    throw new IOException("bank unreachable before any side effect");
                }))
                .isInstanceOf(IOException.class);
        assertThat(memory.find(request.key())).isEmpty();
        assertThat(events.events).containsExactly("claim", "released");

        IdempotentResult retry = engine.execute(request, lease -> Outcome.complete(created));
        assertThat(retry.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
    }

    @Test
    void releaseOutcomeRecordsNothing() throws Exception {
        StoredResponse invalid = StoredResponse.of(422, "{\"type\":\"validation\"}".getBytes(StandardCharsets.UTF_8));
        IdempotentResult result = engine.execute(request, lease -> Outcome.release(invalid));
        assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.RELEASED);
        assertThat(result.response()).isEqualTo(invalid);
        assertThat(result.expiresAt()).isNull();
        assertThat(memory.find(request.key())).isEmpty();
    }

    @Test
    void failOutcomeIsRecordedAndReplayed() throws Exception {
        StoredResponse declined =
                StoredResponse.of(402, "{\"code\":\"card_declined\"}".getBytes(StandardCharsets.UTF_8));
        engine.execute(request, lease -> Outcome.fail(declined));
        AtomicInteger runs = new AtomicInteger();
        IdempotentResult replay = engine.execute(request, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(created);
        });
        assertThat(runs).hasValue(0);
        assertThat(replay.replayed()).isTrue();
        assertThat(replay.response()).isEqualTo(declined);
        assertThat(memory.find(request.key()).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
        assertThat(events.events).containsExactly("claim", "recorded:FAILED", "replay");
    }

    @Test
    void anOwnerThatLostItsLeaseMustNotReportSuccess() {
        assertThatThrownBy(() -> engine.execute(request, lease -> {
                    // a GC pause past the lease; a retry takes over meanwhile
                    clock.advance(Duration.ofSeconds(6));
                    assertThat(memory.claim(
                                    request.key(), request.fingerprint(), Duration.ofSeconds(5), Duration.ofHours(1)))
                            .isInstanceOf(ClaimOutcome.Claimed.class);
                    assertThat(lease.renew(Duration.ofSeconds(5))).isFalse();
                    return Outcome.complete(created);
                }))
                .isInstanceOf(LeaseLostException.class);
        assertThat(memory.find(request.key()).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);
        // the refused renewal is reported as such; the refused final write as the lost lease, once
        assertThat(events.events).containsExactly("claim", "renewal:LOST", "leaseLost");
    }

    @Test
    void renewExtendsTheLeaseSoNoTakeoverHappens() throws Exception {
        IdempotentResult result = engine.execute(request, lease -> {
            clock.advance(Duration.ofSeconds(4));
            assertThat(lease.renew(Duration.ofSeconds(5))).isTrue();
            clock.advance(Duration.ofSeconds(4)); // 8 s after the claim, beyond the first 5 s lease
            assertThat(memory.claim(request.key(), request.fingerprint(), Duration.ofSeconds(5), Duration.ofHours(1)))
                    .isInstanceOf(ClaimOutcome.InFlight.class);
            assertThat(lease.takeover()).isFalse();
            return Outcome.complete(created);
        });
        assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(result.expiresAt()).isEqualTo(clock.instant().plus(Duration.ofHours(1)));
    }

    @Test
    void aThrowingListenerNeverChangesTheOutcome() throws Exception {
        IdempotencyEngine noisy = IdempotencyEngine.builder(memory)
                .clock(clock)
                .listener(new IdempotencyListener() {
                    @Override
                    public void onClaim(IdempotencyRequest r, boolean takeover) {
                        throw new IllegalStateException("metrics backend down");
                    }
                })
                .build();
        assertThat(noisy.execute(request, lease -> Outcome.complete(created)).kind())
                .isEqualTo(IdempotentResult.Kind.EXECUTED);
    }

    @Test
    void mismatchIsReportedAndTheRecordUntouched() throws Exception {
        engine.execute(request, lease -> Outcome.complete(created));
        IdempotencyRequest other =
                IdempotencyRequest.of(request.scope(), new Fingerprint("sha256-jcs", "xyz"), request.policy());
        assertThatThrownBy(() -> engine.execute(other, lease -> Outcome.complete(created)))
                .isInstanceOfSatisfying(IdempotencyKeyReusedException.class, e -> {
                    assertThat(e.stored()).isEqualTo(request.fingerprint());
                    assertThat(e.presented()).isEqualTo(other.fingerprint());
                });
        assertThat(events.events).endsWith("mismatch");
    }

    @Test
    void policiesValidate() {
        assertThatThrownBy(() -> IdempotencyPolicy.custom()
                        .lease(Duration.ofHours(2))
                        .retention(Duration.ofHours(1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("two clocks");
        assertThatThrownBy(() -> InFlightPolicy.waitUpTo(Duration.ofMinutes(5)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> IdempotencyPolicy.custom()
                        .retention(Duration.ofDays(31))
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(((InFlightPolicy.Reject) InFlightPolicy.reject(Duration.ZERO)).retryAfter())
                .isEqualTo(Duration.ofSeconds(1));
        IdempotencyPolicy base = IdempotencyPolicy.ofDefaults();
        IdempotencyPolicy derived =
                IdempotencyPolicy.from(base).retention(Duration.ofDays(7)).build();
        assertThat(derived.lease()).isEqualTo(base.lease());
        assertThat(derived.retention()).isEqualTo(Duration.ofDays(7));
    }

    /** Delegates to a real store, and throws on demand. */
    static final class FlakyStore extends ForwardingIdempotencyStore {
        volatile RuntimeException failing;

        FlakyStore(IdempotencyStore delegate) {
            super(delegate);
        }

        private void maybeFail() {
            if (failing != null) {
                throw failing;
            }
        }

        @Override
        public ClaimOutcome claim(
                ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
            maybeFail();
            return super.claim(key, fingerprint, owner, lease, retention);
        }

        @Override
        public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
            maybeFail();
            return super.complete(key, owner, outcome, response);
        }

        @Override
        public boolean release(ScopeKey key, OwnerToken owner) {
            maybeFail();
            return super.release(key, owner);
        }

        @Override
        public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
            maybeFail();
            return super.renew(key, owner, lease);
        }

        @Override
        public Optional<IdempotencyRecord> find(ScopeKey key) {
            maybeFail();
            return super.find(key);
        }
    }

    static final class RecordingListener implements IdempotencyListener {
        final List<String> events = new ArrayList<>();

        @Override
        public void onClaim(IdempotencyRequest request, boolean takeover) {
            events.add(takeover ? "takeover" : "claim");
        }

        @Override
        public void onReplay(IdempotencyRequest request, IdempotencyRecord record) {
            events.add("replay");
        }

        @Override
        public void onMismatch(IdempotencyRequest request, IdempotencyRecord record) {
            events.add("mismatch");
        }

        @Override
        public void onConflict(IdempotencyRequest request, boolean waited) {
            events.add("conflict");
        }

        @Override
        public void onRecorded(IdempotencyRequest request, RecordStatus status, Duration held) {
            events.add("recorded:" + status);
        }

        @Override
        public void onReleased(IdempotencyRequest request, Duration held) {
            events.add("released");
        }

        @Override
        public void onLeaseLost(IdempotencyRequest request, Duration held) {
            events.add("leaseLost");
        }

        @Override
        public void onStoreError(IdempotencyRequest request, Throwable error) {
            events.add("storeError");
        }

        @Override
        public void onRenewal(IdempotencyRequest request, RenewalResult result) {
            events.add("renewal:" + result);
        }
    }

    @Test
    void aWaiterWhoseClockRunsAheadOfTheStoresBacksOffInsteadOfSpinning() throws Exception {
        InMemoryIdempotencyStore memory = InMemoryIdempotencyStore.builder()
                .clock(java.time.InstantSource.system())
                .build();
        AtomicInteger claims = new AtomicInteger();
        IdempotencyStore counting = new ForwardingIdempotencyStore(memory) {
            @Override
            public ClaimOutcome claim(
                    ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
                claims.incrementAndGet();
                return super.claim(key, fingerprint, owner, lease, retention);
            }
        };
        // the waiter's clock is 30 s ahead of the store's: by it, the owner's 10 s lease ended long ago
        IdempotencyEngine owner = IdempotencyEngine.builder(memory).build();
        IdempotencyEngine waiter = IdempotencyEngine.builder(counting)
                .clock(() -> Instant.now().plusSeconds(30))
                .build();
        IdempotencyPolicy policy = IdempotencyPolicy.custom()
                .lease(Duration.ofSeconds(10))
                .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(2)))
                .build();
        IdempotencyRequest request = IdempotencyRequest.of(
                new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("k-skew")),
                new Fingerprint("sha256-jcs", "abc"),
                policy);
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch finish = new java.util.concurrent.CountDownLatch(1);
        Thread first = Thread.ofVirtual().start(() -> {
            try {
                owner.execute(request, lease -> {
                    running.countDown();
                    finish.await();
                    return Outcome.complete(StoredResponse.of(200, new byte[0]));
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            running.await();
            assertThatThrownBy(() -> waiter.execute(request, lease -> {
                        throw new AssertionError("must not run while the owner's lease is live in the store");
                    }))
                    .isInstanceOf(RequestInFlightException.class);
        } finally {
            finish.countDown();
            first.join();
        }
        // 10, 20, 40 ... 640 ms, then 1 s: about a dozen claims in the 2 s wait, not one a millisecond
        assertThat(claims.get()).isBetween(2, 20);
    }
}
