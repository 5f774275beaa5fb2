package dev.exactly.idempotency.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyKeyReusedException;
import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.RequestInFlightException;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every {@link IdempotencyStore} must pass. Extend it in a store's tests and return the
 * store under test from {@link #createStore()}; every test uses fresh random keys, so one store may be
 * shared by all tests.
 *
 * <p>Timing tests use short real leases and retentions (hundreds of milliseconds) because stores keep
 * their own clock (the Redis server's, the database's), and wait for conditions with Awaitility.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class IdempotencyStoreContract {

    /** A long lease: no test expects it to run out. */
    protected static final Duration LONG_LEASE = Duration.ofSeconds(30);

    protected static final Duration RETENTION = Duration.ofMinutes(10);

    private IdempotencyStore store;

    /** The store under test; called before each test. */
    protected abstract IdempotencyStore createStore();

    /** Called after each test with the store {@link #createStore()} returned. */
    protected void closeStore(IdempotencyStore store) {}

    /**
     * A second, independent store instance over the same backend (another process's view: its own
     * connections and its own push listener), or empty for a store that lives in one process. When
     * present, the suite checks that a waiter on one instance is woken by a write through the other.
     */
    protected java.util.Optional<IdempotencyStore> createPeerStore() {
        return java.util.Optional.empty();
    }

    @BeforeEach
    final void setUpStore() {
        store = createStore();
    }

    @AfterEach
    final void tearDownStore() {
        closeStore(store);
    }

    protected final IdempotencyStore store() {
        return store;
    }

    // ---------------------------------------------------------------- helpers

    protected static ScopeKey randomKey() {
        return scope(UUID.randomUUID().toString()).toScopeKey();
    }

    protected static Scope scope(String key) {
        return new Scope("tenant-" + key.hashCode() % 7, "POST", "/v1/charges", new IdempotencyKey(key));
    }

    protected static Fingerprint randomFingerprint() {
        return new Fingerprint("sha256-jcs", UUID.randomUUID().toString().replace("-", ""));
    }

    protected static StoredResponse response(int status, String body) {
        return new StoredResponse(
                status,
                Map.of("content-type", List.of("application/json"), "x-request-id", List.of("a", "b")),
                body.getBytes(StandardCharsets.UTF_8));
    }

    protected IdempotencyEngine engine(@org.jspecify.annotations.Nullable Duration pollInterval) {
        return IdempotencyEngine.builder(store).pollInterval(pollInterval).build();
    }

    protected static IdempotencyPolicy policy(Duration lease, InFlightPolicy inFlight) {
        return IdempotencyPolicy.custom()
                .lease(lease)
                .retention(RETENTION)
                .inFlight(inFlight)
                .build();
    }

    private ClaimOutcome.Claimed claimNew(ScopeKey key, Fingerprint fp, Duration lease) {
        ClaimOutcome outcome = store.claim(key, fp, lease, RETENTION);
        assertThat(outcome).isInstanceOf(ClaimOutcome.Claimed.class);
        return (ClaimOutcome.Claimed) outcome;
    }

    // ---------------------------------------------------------------- the contract

    @Test
    @DisplayName("first claim creates a PROCESSING record owned by a fresh token")
    void firstClaim() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        ClaimOutcome.Claimed claimed = claimNew(key, fp, LONG_LEASE);

        assertThat(claimed.takeover()).isFalse();
        IdempotencyRecord record = claimed.record();
        assertThat(record.key()).isEqualTo(key);
        assertThat(record.status()).isEqualTo(RecordStatus.PROCESSING);
        assertThat(record.fingerprint()).isEqualTo(fp);
        assertThat(record.leaseExpiresAt()).isAfter(record.createdAt());
        assertThat(record.expiresAt()).isAfterOrEqualTo(record.leaseExpiresAt());

        IdempotencyRecord found = store.find(key).orElseThrow();
        assertThat(found.status()).isEqualTo(RecordStatus.PROCESSING);
        assertThat(found.owner()).isEqualTo(claimed.owner());
        assertThat(found.fingerprint()).isEqualTo(fp);
        assertThat(store.find(randomKey())).isEmpty();
    }

    @Test
    @DisplayName("a response whose header holds a character no HTTP field may hold (U+0000) is still recorded")
    void aHeaderWithANulIsRecorded() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, LONG_LEASE).owner();
        StoredResponse odd = new StoredResponse(
                201,
                Map.of("content-disposition", List.of("attachment; filename=\"a\u0000b.pdf\"")),
                new byte[] {0, 1, 2});
        assertThat(store.complete(key, owner, RecordStatus.COMPLETED, odd))
                .as("a completion that fails every time would leave the record to be taken over and run again")
                .isTrue();
        IdempotencyRecord found = store.find(key).orElseThrow();
        assertThat(found.status()).isEqualTo(RecordStatus.COMPLETED);
        StoredResponse stored = java.util.Objects.requireNonNull(found.response(), "a finished record's response");
        assertThat(stored.body()).isEqualTo(new byte[] {0, 1, 2});
        assertThat(stored.headers().get("content-disposition"))
                .singleElement()
                .asString()
                .startsWith("attachment; filename=\"a")
                .endsWith("b.pdf\"");
    }

    @Test
    @DisplayName("two claims of one key get different owners only after release")
    void ownersAreUnique() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken first = claimNew(key, fp, LONG_LEASE).owner();
        assertThat(store.release(key, first)).isTrue();
        OwnerToken second = claimNew(key, fp, LONG_LEASE).owner();
        assertThat(second).isNotEqualTo(first);
    }

    @Test
    @DisplayName("a completed key is replayed: same status, headers and bytes; the action runs once")
    void replayAfterCompletion() throws Exception {
        IdempotencyEngine engine = engine(Duration.ofMillis(50));
        IdempotencyRequest request = IdempotencyRequest.of(
                scope(UUID.randomUUID().toString()), randomFingerprint(), IdempotencyPolicy.ofDefaults());
        AtomicInteger runs = new AtomicInteger();
        StoredResponse original = response(201, "{\"id\":\"ch_1\",\"amount\":1999}");

        IdempotentResult first = engine.execute(request, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(original);
        });
        IdempotentResult second = engine.execute(request, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(response(201, "{\"id\":\"ch_2\"}"));
        });

        assertThat(runs).hasValue(1);
        assertThat(first.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(second.kind()).isEqualTo(IdempotentResult.Kind.REPLAYED);
        assertThat(second.response()).isEqualTo(original);
        assertThat(second.response().body()).isEqualTo(original.body());
        assertThat(second.response().headers()).isEqualTo(original.headers());
        assertThat(second.expiresAt()).isNotNull();
    }

    @Test
    @DisplayName("a FAILED outcome is terminal and replayed too")
    void failedIsReplayed() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, LONG_LEASE).owner();
        StoredResponse declined = response(402, "{\"code\":\"card_declined\"}");
        assertThat(store.complete(key, owner, RecordStatus.FAILED, declined)).isTrue();

        ClaimOutcome again = store.claim(key, fp, LONG_LEASE, RETENTION);
        assertThat(again).isInstanceOf(ClaimOutcome.Finished.class);
        assertThat(again.record().status()).isEqualTo(RecordStatus.FAILED);
        assertThat(again.record().response()).isEqualTo(declined);
    }

    @Test
    @DisplayName("body bytes survive exactly, including bytes that are not UTF-8")
    void bodyBytesAreExact() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, LONG_LEASE).owner();
        byte[] body = new byte[4096];
        ThreadLocalRandom.current().nextBytes(body);
        byte[] sent = body.clone();
        StoredResponse response =
                new StoredResponse(200, Map.of("content-type", List.of("application/octet-stream")), body);
        body[0] ^= 0x7f; // the caller's buffer changing later must not change what is replayed
        assertThat(store.complete(key, owner, RecordStatus.COMPLETED, response)).isTrue();

        StoredResponse stored = store.find(key).orElseThrow().response();
        assertThat(stored).isNotNull();
        assertThat(Objects.requireNonNull(stored).body()).isEqualTo(sent);
        assertThat(stored.status()).isEqualTo(200);
    }

    @Test
    @DisplayName("an empty body and no headers round-trip")
    void emptyResponse() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, LONG_LEASE).owner();
        StoredResponse empty = new StoredResponse(204, Map.of(), new byte[0]);
        assertThat(store.complete(key, owner, RecordStatus.COMPLETED, empty)).isTrue();
        assertThat(store.find(key).orElseThrow().response()).isEqualTo(empty);
    }

    @Test
    @DisplayName("a different fingerprint on a finished key is a mismatch and changes nothing")
    void mismatchOnFinished() throws Exception {
        IdempotencyEngine engine = engine(Duration.ofMillis(50));
        Scope scope = scope(UUID.randomUUID().toString());
        IdempotencyRequest first = IdempotencyRequest.of(scope, randomFingerprint(), IdempotencyPolicy.ofDefaults());
        IdempotencyRequest other = IdempotencyRequest.of(scope, randomFingerprint(), IdempotencyPolicy.ofDefaults());
        StoredResponse original = response(201, "{\"id\":\"ch_1\"}");
        engine.execute(first, lease -> Outcome.complete(original));

        assertThatThrownBy(() -> engine.execute(other, lease -> Outcome.complete(response(201, "{}"))))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        ClaimOutcome outcome = store.claim(other.key(), other.fingerprint(), LONG_LEASE, RETENTION);
        assertThat(outcome).isInstanceOf(ClaimOutcome.Finished.class);
        assertThat(outcome.record().fingerprint()).isEqualTo(first.fingerprint());
        assertThat(engine.execute(first, lease -> Outcome.complete(response(500, "{}")))
                        .response())
                .isEqualTo(original);
    }

    @Test
    @DisplayName("a different fingerprint on an in-flight key is a mismatch, not a conflict")
    void mismatchOnInFlight() {
        IdempotencyEngine engine = engine(Duration.ofMillis(50));
        Scope scope = scope(UUID.randomUUID().toString());
        IdempotencyRequest first = IdempotencyRequest.of(scope, randomFingerprint(), IdempotencyPolicy.ofDefaults());
        claimNew(first.key(), first.fingerprint(), LONG_LEASE);
        IdempotencyRequest other = IdempotencyRequest.of(
                scope, randomFingerprint(), policy(LONG_LEASE, InFlightPolicy.waitUpTo(Duration.ofSeconds(5))));

        assertThatThrownBy(() -> engine.execute(other, lease -> Outcome.complete(response(201, "{}"))))
                .isInstanceOf(IdempotencyKeyReusedException.class);
    }

    @Test
    @DisplayName("an expired lease is never taken over by a request with a different fingerprint")
    void noTakeoverOnMismatch() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, Duration.ofMillis(150)).owner();
        Fingerprint other = randomFingerprint();
        // for a whole second, most of it after the 150 ms lease ran out, the other payload stays refused
        await().during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> store.claim(key, other, LONG_LEASE, RETENTION) instanceof ClaimOutcome.InFlight inFlight
                        && owner.equals(inFlight.record().owner())
                        && fp.equals(inFlight.record().fingerprint()));
        assertThat(store.find(key).orElseThrow().owner()).isEqualTo(owner);
        // while the same payload takes over
        ClaimOutcome takeover = store.claim(key, fp, LONG_LEASE, RETENTION);
        assertThat(takeover)
                .isInstanceOfSatisfying(
                        ClaimOutcome.Claimed.class,
                        c -> assertThat(c.takeover()).isTrue());
    }

    @Test
    @DisplayName("a second claim while the lease is live is in flight; the engine answers with a conflict")
    void inFlightConflict() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, LONG_LEASE).owner();

        ClaimOutcome second = store.claim(key, fp, LONG_LEASE, RETENTION);
        assertThat(second).isInstanceOf(ClaimOutcome.InFlight.class);
        assertThat(second.record().owner()).isEqualTo(owner);

        IdempotencyEngine engine = engine(Duration.ofMillis(50));
        Scope scope = scope(UUID.randomUUID().toString());
        IdempotencyRequest request = IdempotencyRequest.of(scope, fp, IdempotencyPolicy.ofDefaults());
        claimNew(request.key(), fp, LONG_LEASE);
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> engine.execute(request, lease -> {
                    runs.incrementAndGet();
                    return Outcome.complete(response(201, "{}"));
                }))
                .isInstanceOfSatisfying(RequestInFlightException.class, e -> {
                    assertThat(e.retryAfter()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
                    assertThat(e.waited()).isFalse();
                });
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("a waiting duplicate is woken by the store's push (polling disabled) and replays")
    void waitThenReplayWokenByPush() throws Exception {
        IdempotencyEngine engine = engine(null); // no polling: only the push can wake the waiter in time
        Scope scope = scope(UUID.randomUUID().toString());
        Fingerprint fp = randomFingerprint();
        // lease (30 s) longer than the wait bound (20 s): neither lease end nor timeout can end the wait
        IdempotencyPolicy waitPolicy = policy(LONG_LEASE, InFlightPolicy.waitUpTo(Duration.ofSeconds(20)));
        IdempotencyRequest request = IdempotencyRequest.of(scope, fp, waitPolicy);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        StoredResponse original = response(201, "{\"id\":\"ch_wait\"}");
        AtomicInteger runs = new AtomicInteger();

        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            Future<IdempotentResult> owner = pool.submit(() -> engine.execute(request, lease -> {
                runs.incrementAndGet();
                started.countDown();
                assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
                return Outcome.complete(original);
            }));
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            List<Future<IdempotentResult>> waiters = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                waiters.add(pool.submit(() -> engine.execute(request, lease -> {
                    runs.incrementAndGet();
                    return Outcome.complete(response(201, "{\"id\":\"ch_dup\"}"));
                })));
            }
            // every waiter is parked on the key before the owner finishes
            await().atMost(Duration.ofSeconds(10)).until(() -> waiters.stream().noneMatch(Future::isDone));
            long before = System.nanoTime();
            finish.countDown();
            assertThat(owner.get(30, TimeUnit.SECONDS).kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
            for (Future<IdempotentResult> waiter : waiters) {
                IdempotentResult result = waiter.get(30, TimeUnit.SECONDS);
                assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.REPLAYED);
                assertThat(result.response()).isEqualTo(original);
            }
            assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(Duration.ofSeconds(10));
            assertThat(runs).hasValue(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("a waiter on another instance is woken by the push (polling disabled) and replays")
    void waiterOnPeerInstanceWokenByPush() throws Exception {
        Optional<IdempotencyStore> peerStore = createPeerStore();
        org.junit.jupiter.api.Assumptions.assumeTrue(peerStore.isPresent(), "single-process store: no peer instance");
        IdempotencyStore peer = peerStore.orElseThrow();
        try {
            IdempotencyEngine peerEngine =
                    IdempotencyEngine.builder(peer).pollInterval(null).build();
            Fingerprint fp = randomFingerprint();
            IdempotencyRequest request = IdempotencyRequest.of(
                    scope(UUID.randomUUID().toString()),
                    fp,
                    policy(LONG_LEASE, InFlightPolicy.waitUpTo(Duration.ofSeconds(20))));
            OwnerToken owner = claimNew(request.key(), fp, LONG_LEASE).owner();
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<IdempotentResult> waiter = pool.submit(() ->
                        peerEngine.execute(request, lease -> Outcome.complete(response(201, "{\"waiter\":true}"))));
                await().atMost(Duration.ofSeconds(5)).until(() -> !waiter.isDone());
                StoredResponse original = response(201, "{\"owner\":true}");
                long before = System.nanoTime();
                assertThat(store.complete(request.key(), owner, RecordStatus.COMPLETED, original))
                        .isTrue();
                IdempotentResult result = waiter.get(15, TimeUnit.SECONDS);
                assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.REPLAYED);
                assertThat(result.response()).isEqualTo(original);
                assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(Duration.ofSeconds(10));
            } finally {
                pool.shutdownNow();
            }
        } finally {
            peer.close();
        }
    }

    @Test
    @DisplayName("a waiter takes over when the owner releases, and runs the action itself")
    void waiterClaimsAfterRelease() throws Exception {
        IdempotencyEngine engine = engine(null);
        Scope scope = scope(UUID.randomUUID().toString());
        Fingerprint fp = randomFingerprint();
        IdempotencyRequest request =
                IdempotencyRequest.of(scope, fp, policy(LONG_LEASE, InFlightPolicy.waitUpTo(Duration.ofSeconds(20))));
        OwnerToken first = claimNew(request.key(), fp, LONG_LEASE).owner();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            CountDownLatch ran = new CountDownLatch(1);
            Future<IdempotentResult> waiter = pool.submit(() -> engine.execute(request, lease -> {
                ran.countDown();
                return Outcome.complete(response(201, "{\"second\":true}"));
            }));
            await().atMost(Duration.ofSeconds(5)).until(() -> !waiter.isDone());
            assertThat(store.release(request.key(), first)).isTrue();
            assertThat(waiter.get(15, TimeUnit.SECONDS).kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
            assertThat(ran.getCount()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("the wait is bounded: a waiter gives up with a conflict when the owner never finishes")
    void waitIsBounded() {
        IdempotencyEngine engine = engine(null);
        Scope scope = scope(UUID.randomUUID().toString());
        Fingerprint fp = randomFingerprint();
        IdempotencyRequest request =
                IdempotencyRequest.of(scope, fp, policy(LONG_LEASE, InFlightPolicy.waitUpTo(Duration.ofMillis(300))));
        claimNew(request.key(), fp, LONG_LEASE);
        assertThatThrownBy(() -> engine.execute(request, lease -> Outcome.complete(response(201, "{}"))))
                .isInstanceOfSatisfying(
                        RequestInFlightException.class,
                        e -> assertThat(e.waited()).isTrue());
    }

    @Test
    @DisplayName("after the lease expires a second owner takes over; the first owner's writes are refused")
    void leaseExpiryTakeover() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken first = claimNew(key, fp, Duration.ofMillis(200)).owner();

        ClaimOutcome.Claimed[] second = new ClaimOutcome.Claimed[1];
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    ClaimOutcome outcome = store.claim(key, fp, LONG_LEASE, RETENTION);
                    if (outcome instanceof ClaimOutcome.Claimed claimed) {
                        second[0] = claimed;
                        return true;
                    }
                    assertThat(outcome).isInstanceOf(ClaimOutcome.InFlight.class);
                    return false;
                });
        assertThat(second[0].takeover()).isTrue();
        OwnerToken secondOwner = second[0].owner();
        assertThat(secondOwner).isNotEqualTo(first);

        assertThat(store.complete(key, first, RecordStatus.COMPLETED, response(201, "{\"stale\":true}")))
                .isFalse();
        assertThat(store.renew(key, first, LONG_LEASE)).isFalse();
        assertThat(store.release(key, first)).isFalse();
        assertThat(store.find(key).orElseThrow().owner()).isEqualTo(secondOwner);

        StoredResponse fresh = response(201, "{\"fresh\":true}");
        assertThat(store.complete(key, secondOwner, RecordStatus.COMPLETED, fresh))
                .isTrue();
        assertThat(store.find(key).orElseThrow().response()).isEqualTo(fresh);
    }

    @Test
    @DisplayName("a stale or foreign owner can neither complete, release nor renew")
    void staleOwnerRejected() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, LONG_LEASE).owner();
        OwnerToken stranger = OwnerToken.random();

        assertThat(store.complete(key, stranger, RecordStatus.COMPLETED, response(201, "{}")))
                .isFalse();
        assertThat(store.release(key, stranger)).isFalse();
        assertThat(store.renew(key, stranger, LONG_LEASE)).isFalse();
        assertThat(store.find(key).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);

        StoredResponse done = response(201, "{\"ok\":1}");
        assertThat(store.complete(key, owner, RecordStatus.COMPLETED, done)).isTrue();
        // once finished, even the owner cannot write again
        assertThat(store.complete(key, owner, RecordStatus.FAILED, response(500, "{}")))
                .isFalse();
        assertThat(store.release(key, owner)).isFalse();
        assertThat(store.renew(key, owner, LONG_LEASE)).isFalse();
        assertThat(store.find(key).orElseThrow().response()).isEqualTo(done);

        ScopeKey absent = randomKey();
        assertThat(store.complete(absent, owner, RecordStatus.COMPLETED, done)).isFalse();
        assertThat(store.release(absent, owner)).isFalse();
        assertThat(store.renew(absent, owner, LONG_LEASE)).isFalse();
        assertThat(store.find(absent)).isEmpty();
    }

    @Test
    @DisplayName("a claim takes the caller's token, so a claim whose answer was lost can be undone by it")
    void claimUndoneByItsToken() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken chosen = OwnerToken.random();
        ClaimOutcome outcome = store.claim(key, fp, chosen, LONG_LEASE, RETENTION);
        assertThat(outcome).isInstanceOf(ClaimOutcome.Claimed.class);
        assertThat(((ClaimOutcome.Claimed) outcome).owner()).isEqualTo(chosen);
        assertThat(store.find(key).orElseThrow().owner()).isEqualTo(chosen);

        // a second claim under another token finds the key taken, and leaves it alone
        OwnerToken late = OwnerToken.random();
        assertThat(store.claim(key, fp, late, LONG_LEASE, RETENTION)).isInstanceOf(ClaimOutcome.InFlight.class);
        assertThat(store.release(key, late))
                .as("undoing a claim that never landed")
                .isFalse();
        assertThat(store.find(key).orElseThrow().owner()).isEqualTo(chosen);

        assertThat(store.release(key, chosen))
                .as("undoing the claim that landed")
                .isTrue();
        assertThat(store.find(key)).isEmpty();
        assertThat(store.release(key, chosen)).as("undoing it twice").isFalse();
    }

    @Test
    @DisplayName("release deletes the record so that a retry claims afresh")
    void releaseThenReclaim() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, LONG_LEASE).owner();
        assertThat(store.release(key, owner)).isTrue();
        assertThat(store.find(key)).isEmpty();

        // after a release, even another payload may use the key: nothing was recorded
        ClaimOutcome.Claimed again = claimNew(key, randomFingerprint(), LONG_LEASE);
        assertThat(again.takeover()).isFalse();
        assertThat(again.owner()).isNotEqualTo(owner);
    }

    @Test
    @DisplayName("a finished record is forgotten after its retention")
    void retentionExpiry() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        ClaimOutcome.Claimed claimed =
                (ClaimOutcome.Claimed) store.claim(key, fp, Duration.ofMillis(100), Duration.ofMillis(700));
        assertThat(store.complete(key, claimed.owner(), RecordStatus.COMPLETED, response(201, "{}")))
                .isTrue();
        IdempotencyRecord finished = store.find(key).orElseThrow();
        assertThat(finished.status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(Duration.between(finished.createdAt(), finished.expiresAt()))
                .isGreaterThanOrEqualTo(Duration.ofMillis(600));

        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> store.find(key).isEmpty());
        ClaimOutcome.Claimed fresh = claimNew(key, randomFingerprint(), LONG_LEASE);
        assertThat(fresh.takeover()).isFalse();
    }

    @Test
    @DisplayName("an abandoned PROCESSING record is forgotten after its retention too")
    void processingRecordExpires() {
        ScopeKey key = randomKey();
        store.claim(key, randomFingerprint(), Duration.ofMillis(100), Duration.ofMillis(500));
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> store.find(key).isEmpty());
    }

    @Test
    @DisplayName("renew extends the lease of the current owner only")
    void renew() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        ClaimOutcome.Claimed claimed = claimNew(key, fp, Duration.ofMillis(500));
        IdempotencyRecord before = claimed.record();
        assertThat(store.renew(key, claimed.owner(), Duration.ofSeconds(20))).isTrue();
        IdempotencyRecord after = store.find(key).orElseThrow();
        assertThat(after.leaseExpiresAt()).isAfter(before.leaseExpiresAt());
        assertThat(Duration.between(after.createdAt(), after.leaseExpiresAt()))
                .isGreaterThanOrEqualTo(Duration.ofSeconds(19));
        assertThat(after.owner()).isEqualTo(claimed.owner());
        assertThat(after.status()).isEqualTo(RecordStatus.PROCESSING);
        // well past the original 500 ms lease the key is still in flight
        assertThat(store.claim(key, fp, LONG_LEASE, RETENTION)).isInstanceOf(ClaimOutcome.InFlight.class);
    }

    // ---------------------------------------------------------------- renewal and keep-alive

    /** The lease of the keep-alive tests: renewed every 500 ms, so a loaded machine has a second to spare. */
    protected static final Duration KEEP_ALIVE_LEASE = Duration.ofMillis(1500);

    @Test
    @DisplayName("renew by an owner whose lease ran out succeeds until another owner takes over")
    void renewAfterLeaseEndUntilTakenOver() {
        ScopeKey key = randomKey();
        Fingerprint fp = randomFingerprint();
        OwnerToken owner = claimNew(key, fp, Duration.ofMillis(200)).owner();
        // a key claimed after ours with the same lease: once it can be taken over, our lease has ended too
        ScopeKey later = randomKey();
        Fingerprint laterFp = randomFingerprint();
        claimNew(later, laterFp, Duration.ofMillis(200));
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> store.claim(later, laterFp, LONG_LEASE, RETENTION) instanceof ClaimOutcome.Claimed);
        // nobody took ours over: a late renewal (a keep-alive after a stall) keeps the key
        assertThat(store.renew(key, owner, LONG_LEASE)).isTrue();
        assertThat(store.claim(key, fp, LONG_LEASE, RETENTION)).isInstanceOf(ClaimOutcome.InFlight.class);
        assertThat(store.find(key).orElseThrow().owner()).isEqualTo(owner);
    }

    @Test
    @DisplayName("keep-alive: an action lasting 3 x the lease runs once; duplicates get a conflict or wait and replay")
    void keepAliveHoldsTheKeyThroughALongAction() throws Exception {
        AtomicInteger renewals = new AtomicInteger();
        IdempotencyEngine engine = IdempotencyEngine.builder(store)
                .pollInterval(Duration.ofMillis(200))
                .listener(new IdempotencyListener() {
                    @Override
                    public void onRenewal(IdempotencyRequest request, IdempotencyListener.RenewalResult result) {
                        if (result == IdempotencyListener.RenewalResult.RENEWED) {
                            renewals.incrementAndGet();
                        }
                    }
                })
                .build();
        Scope scope = scope(UUID.randomUUID().toString());
        Fingerprint fp = randomFingerprint();
        IdempotencyRequest request = IdempotencyRequest.of(
                scope, fp, policy(KEEP_ALIVE_LEASE, InFlightPolicy.reject(Duration.ofSeconds(1))));
        IdempotencyRequest waiting = IdempotencyRequest.of(
                scope, fp, policy(KEEP_ALIVE_LEASE, InFlightPolicy.waitUpTo(Duration.ofSeconds(30))));
        StoredResponse original = response(201, "{\"id\":\"ch_long\"}");
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<IdempotentResult> owner = pool.submit(() -> engine.execute(request, lease -> {
                runs.incrementAndGet();
                started.countDown();
                assertThat(finish.await(60, TimeUnit.SECONDS)).isTrue();
                assertThat(lease.isLost()).isFalse();
                return Outcome.complete(original);
            }));
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            OwnerToken first = Objects.requireNonNull(
                    store.find(request.key()).orElseThrow().owner(), "in flight: owned");
            Future<IdempotentResult> waiter = pool.submit(() -> engine.execute(waiting, lease -> {
                runs.incrementAndGet();
                return Outcome.complete(response(201, "{\"id\":\"ch_waiter\"}"));
            }));
            // for three leases every duplicate is refused, and the record stays the first owner's
            Duration threeLeases = KEEP_ALIVE_LEASE.multipliedBy(3);
            await().during(threeLeases)
                    .atMost(threeLeases.plusSeconds(20))
                    .pollInterval(Duration.ofMillis(150))
                    .until(() -> {
                        assertThatThrownBy(() -> engine.execute(request, lease -> {
                                    runs.incrementAndGet();
                                    return Outcome.complete(response(201, "{\"id\":\"ch_dup\"}"));
                                }))
                                .isInstanceOf(RequestInFlightException.class);
                        return first.equals(
                                        store.find(request.key()).orElseThrow().owner())
                                && !waiter.isDone();
                    });
            finish.countDown();
            assertThat(owner.get(30, TimeUnit.SECONDS).kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
            IdempotentResult replayed = waiter.get(30, TimeUnit.SECONDS);
            assertThat(replayed.kind()).isEqualTo(IdempotentResult.Kind.REPLAYED);
            assertThat(replayed.response()).isEqualTo(original);
        } finally {
            finish.countDown();
            pool.shutdownNow();
        }
        assertThat(runs).hasValue(1);
        assertThat(renewals.get()).as("renewals while the action ran").isGreaterThanOrEqualTo(3);
        assertThat(store.find(request.key()).orElseThrow().response()).isEqualTo(original);
    }

    @Test
    @DisplayName(
            "keep-alive: a paused owner (renewal blocked) is taken over past its lease; its late completion is refused")
    void pausedOwnerIsTakenOverAndItsLateCompletionRefused() throws Exception {
        CountDownLatch unblock = new CountDownLatch(1);
        CountDownLatch renewalBlocked = new CountDownLatch(1);
        // the owner's process: its keep-alive's renewal hangs (a stalled thread, a frozen connection)
        IdempotencyStore stalled = new ForwardingIdempotencyStore(store) {
            @Override
            public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
                renewalBlocked.countDown();
                try {
                    if (!unblock.await(60, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("never unblocked");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
                return super.renew(key, owner, lease);
            }

            @Override
            public void close() {
                // the store under test outlives this view
            }
        };
        List<IdempotencyListener.RenewalResult> renewals = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicInteger leaseLost = new AtomicInteger();
        IdempotencyEngine pausedEngine = IdempotencyEngine.builder(stalled)
                .listener(new IdempotencyListener() {
                    @Override
                    public void onRenewal(IdempotencyRequest request, IdempotencyListener.RenewalResult result) {
                        renewals.add(result);
                    }

                    @Override
                    public void onLeaseLost(IdempotencyRequest request, Duration held) {
                        leaseLost.incrementAndGet();
                    }
                })
                .build();
        IdempotencyEngine otherEngine = engine(Duration.ofMillis(100));
        Fingerprint fp = randomFingerprint();
        IdempotencyRequest request = IdempotencyRequest.of(
                scope(UUID.randomUUID().toString()),
                fp,
                policy(KEEP_ALIVE_LEASE, InFlightPolicy.reject(Duration.ofSeconds(1))));
        StoredResponse late = response(201, "{\"id\":\"ch_late\"}");
        StoredResponse winner = response(201, "{\"id\":\"ch_winner\"}");
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch lost = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<IdempotentResult> paused = pool.submit(() -> pausedEngine.execute(request, lease -> {
                runs.incrementAndGet();
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(20))
                        .until(lease::isLost);
                lost.countDown();
                assertThat(finish.await(60, TimeUnit.SECONDS)).isTrue();
                return Outcome.complete(late);
            }));
            assertThat(renewalBlocked.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(lost.await(30, TimeUnit.SECONDS))
                    .as("the paused owner sees its lease lost")
                    .isTrue();
            // another process takes the key over once the lease has run out, and runs the action
            IdempotentResult[] taken = new IdempotentResult[1];
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        try {
                            taken[0] = otherEngine.execute(request, lease -> {
                                runs.incrementAndGet();
                                assertThat(lease.takeover()).isTrue();
                                return Outcome.complete(winner);
                            });
                            return true;
                        } catch (RequestInFlightException stillHeld) {
                            return false;
                        }
                    });
            assertThat(taken[0].kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
            // the stalled renewal reaches the store now: refused, the new owner keeps the key
            unblock.countDown();
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> renewals.contains(IdempotencyListener.RenewalResult.LOST));
            finish.countDown();
            assertThatThrownBy(() -> paused.get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(dev.exactly.idempotency.LeaseLostException.class);
        } finally {
            unblock.countDown();
            finish.countDown();
            pool.shutdownNow();
        }
        assertThat(runs).as("the paused owner's run and the takeover's").hasValue(2);
        assertThat(leaseLost).hasValue(1);
        IdempotencyRecord record = store.find(request.key()).orElseThrow();
        assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(record.response()).isEqualTo(winner);
    }

    @Test
    @DisplayName("race: 32 threads x 200 keys, all threads on one key at a time; exactly one execution per key")
    void race() throws Exception {
        int threads = 32;
        int keys = 200;
        IdempotencyEngine engine = engine(Duration.ofMillis(20));
        List<IdempotencyRequest> requests = new ArrayList<>();
        String prefix = UUID.randomUUID().toString();
        for (int i = 0; i < keys; i++) {
            requests.add(IdempotencyRequest.of(
                    scope(prefix + "-" + i), new Fingerprint("sha256-jcs", "fp" + i), IdempotencyPolicy.ofDefaults()));
        }
        AtomicIntegerArray executions = new AtomicIntegerArray(keys);
        AtomicInteger replays = new AtomicInteger();
        AtomicInteger conflicts = new AtomicInteger();
        AtomicInteger executed = new AtomicInteger();
        Map<Integer, byte[]> firstBodies = Collections.synchronizedMap(new HashMap<>());
        // every round, all threads are released together onto the same key: maximum contention
        CyclicBarrier barrier = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<String>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    List<String> problems = new ArrayList<>();
                    for (int i = 0; i < keys; i++) {
                        int k = i;
                        barrier.await(60, TimeUnit.SECONDS);
                        try {
                            IdempotentResult result = engine.execute(requests.get(k), lease -> {
                                executions.incrementAndGet(k);
                                return Outcome.complete(response(201, "{\"key\":" + k + ",\"thread\":" + thread + "}"));
                            });
                            if (result.replayed()) {
                                replays.incrementAndGet();
                                byte[] body = result.response().body();
                                byte[] first = firstBodies.putIfAbsent(k, body);
                                if (first != null && !java.util.Arrays.equals(first, body)) {
                                    problems.add("key " + k + " replayed two different bodies");
                                }
                            } else {
                                executed.incrementAndGet();
                            }
                        } catch (RequestInFlightException e) {
                            conflicts.incrementAndGet();
                        } catch (RuntimeException e) {
                            problems.add("key " + k + ": " + e);
                        }
                    }
                    return problems;
                }));
            }
            for (Future<List<String>> future : futures) {
                assertThat(future.get(100, TimeUnit.SECONDS)).isEmpty();
            }
        } finally {
            pool.shutdownNow();
        }
        for (int i = 0; i < keys; i++) {
            assertThat(executions.get(i)).as("executions of key %d", i).isEqualTo(1);
        }
        assertThat(executed).hasValue(keys);
        assertThat(replays.get() + conflicts.get()).isEqualTo(threads * keys - keys);
        for (IdempotencyRequest request : requests) {
            assertThat(store.find(request.key()).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
        }
    }
}
