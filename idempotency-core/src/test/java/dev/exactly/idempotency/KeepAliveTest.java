package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.IdempotencyListener.RenewalResult;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine's keep-alive on the in-memory store with real time: what it renews, when it stops, its max
 * hold, and what the action and the listener see when a renewal fails. The store contract suite runs the
 * long-action and paused-owner cases against every store.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KeepAliveTest {
    /** Short enough to pass several times per test; renewed every 500 ms, so a loaded machine has a second to spare. */
    private static final Duration LEASE = Duration.ofMillis(1500);

    private static final Duration RETENTION = Duration.ofHours(1);

    private final InMemoryIdempotencyStore memory = InMemoryIdempotencyStore.create();
    private final CountingStore store = new CountingStore(memory);
    private final List<RenewalResult> renewals = new CopyOnWriteArrayList<>();
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final IdempotencyEngine engine = IdempotencyEngine.builder(store)
            .listener(new IdempotencyListener() {
                @Override
                public void onRenewal(IdempotencyRequest request, RenewalResult result) {
                    renewals.add(result);
                }

                @Override
                public void onLeaseLost(IdempotencyRequest request, Duration held) {
                    events.add("leaseLost");
                }

                @Override
                public void onRecorded(IdempotencyRequest request, RecordStatus status, Duration held) {
                    events.add("recorded");
                }
            })
            .build();
    private final StoredResponse created = StoredResponse.of(201, "{\"id\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8));

    private static IdempotencyRequest request(KeepAlive keepAlive) {
        return IdempotencyRequest.of(
                new Scope(
                        "acme",
                        "POST",
                        "/v1/charges",
                        new IdempotencyKey(UUID.randomUUID().toString())),
                new Fingerprint("sha256-jcs", "abc"),
                IdempotencyPolicy.custom()
                        .lease(LEASE)
                        .retention(RETENTION)
                        .keepAlive(keepAlive)
                        .build());
    }

    @Test
    void defaultsRenewEveryThirdOfATenSecondLeaseForUpToFiveMinutes() {
        IdempotencyPolicy defaults = IdempotencyPolicy.ofDefaults();
        assertThat(defaults.lease()).isEqualTo(Duration.ofSeconds(10));
        assertThat(defaults.keepAlive()).isEqualTo(new KeepAlive(true, Duration.ofMinutes(5)));
        assertThat(KeepAlive.interval(defaults.lease())).isEqualTo(Duration.ofMillis(3333));
        assertThat(KeepAlive.interval(Duration.ofMillis(2))).isEqualTo(Duration.ofMillis(1));
        assertThat(new IdempotencyPolicy(LEASE, RETENTION, InFlightPolicy.reject(Duration.ofSeconds(1))).keepAlive())
                .isEqualTo(KeepAlive.ofDefaults());
        assertThatThrownBy(() ->
                        IdempotencyPolicy.custom().lease(Duration.ofMinutes(10)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max hold (PT5M) must be at least the lease (PT10M)");
        assertThat(IdempotencyPolicy.custom()
                        .lease(Duration.ofMinutes(10))
                        .keepAlive(KeepAlive.disabled())
                        .build()
                        .lease())
                .isEqualTo(Duration.ofMinutes(10));
        assertThatThrownBy(() -> KeepAlive.upTo(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anActionLastingThreeLeasesKeepsItsKeyAndRunsOnce() throws Exception {
        IdempotencyRequest request = request(KeepAlive.ofDefaults());
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<IdempotentResult> first =
                CompletableFuture.supplyAsync(() -> call(() -> engine.execute(request, lease -> {
                    runs.incrementAndGet();
                    finish.await();
                    assertThat(lease.isLost()).isFalse();
                    return Outcome.complete(created);
                })));
        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
        OwnerToken owner = memory.find(request.key()).orElseThrow().owner();
        // for three leases, every duplicate finds the key in flight under the first owner
        await().during(LEASE.multipliedBy(3))
                .atMost(LEASE.multipliedBy(3).plusSeconds(10))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    assertThatThrownBy(() -> engine.execute(request, lease -> {
                                runs.incrementAndGet();
                                return Outcome.complete(created);
                            }))
                            .isInstanceOf(RequestInFlightException.class);
                    return owner.equals(memory.find(request.key()).orElseThrow().owner());
                });
        finish.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS).kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(runs).hasValue(1);
        assertThat(renewals).contains(RenewalResult.RENEWED).doesNotContain(RenewalResult.LOST);
        assertThat(memory.find(request.key()).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
    }

    @Test
    void renewalStopsTheMomentTheActionReturnsOrThrows() throws Exception {
        IdempotencyRequest returning = request(KeepAlive.ofDefaults());
        engine.execute(returning, lease -> {
            // long enough for at least one renewal
            await().atMost(Duration.ofSeconds(10)).until(() -> store.renewals.get() >= 1);
            return Outcome.complete(created);
        });
        int afterReturn = store.renewals.get();
        await().during(LEASE.multipliedBy(2))
                .atMost(LEASE.multipliedBy(2).plusSeconds(5))
                .until(() -> store.renewals.get() == afterReturn);

        IdempotencyRequest throwing = request(KeepAlive.ofDefaults());
        assertThatThrownBy(() -> engine.execute(throwing, lease -> {
                    await().atMost(Duration.ofSeconds(10)).until(() -> store.renewals.get() > afterReturn);
                    throw new IOException("bank unreachable before any side effect");
                }))
                .isInstanceOf(IOException.class);
        int afterThrow = store.renewals.get();
        await().during(LEASE.multipliedBy(2))
                .atMost(LEASE.multipliedBy(2).plusSeconds(5))
                .until(() -> store.renewals.get() == afterThrow);
        assertThat(memory.find(throwing.key())).isEmpty();
        assertThat(renewals).doesNotContain(RenewalResult.LOST, RenewalResult.FAILED);
    }

    @Test
    void withoutKeepAliveASlowActionIsTakenOverAndItsOutcomeRefused() throws Exception {
        IdempotencyRequest request = request(KeepAlive.disabled());
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch finish = new CountDownLatch(1);
        AtomicReference<Lease> firstLease = new AtomicReference<>();
        CompletableFuture<IdempotentResult> first =
                CompletableFuture.supplyAsync(() -> call(() -> engine.execute(request, lease -> {
                    runs.incrementAndGet();
                    firstLease.set(lease);
                    finish.await();
                    return Outcome.complete(created);
                })));
        await().atMost(Duration.ofSeconds(10)).until(() -> firstLease.get() != null);
        // the lease runs out while the action is merely slow: the action can see it, and a retry takes over
        await().atMost(Duration.ofSeconds(10)).until(() -> firstLease.get().isLost());
        IdempotentResult second =
                await().atMost(Duration.ofSeconds(10)).until(() -> tryExecute(request, runs), r -> r != null);
        assertThat(second.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        finish.countDown();
        assertThat(first)
                .failsWithin(Duration.ofSeconds(10))
                .withThrowableThat()
                .havingRootCause()
                .isInstanceOf(LeaseLostException.class);
        assertThat(runs).hasValue(2);
        assertThat(store.renewals).hasValue(0);
        assertThat(renewals).isEmpty();
    }

    @Test
    void theMaxHoldBoundsAHungAction() throws Exception {
        Duration maxHold = LEASE.multipliedBy(2);
        IdempotencyRequest request = request(KeepAlive.upTo(maxHold));
        CountDownLatch finish = new CountDownLatch(1);
        AtomicReference<Lease> firstLease = new AtomicReference<>();
        Instant claimed = Instant.now();
        CompletableFuture<IdempotentResult> first =
                CompletableFuture.supplyAsync(() -> call(() -> engine.execute(request, lease -> {
                    firstLease.set(lease);
                    finish.await();
                    return Outcome.complete(created);
                })));
        await().atMost(Duration.ofSeconds(10)).until(() -> renewals.contains(RenewalResult.MAX_HOLD));
        assertThat(renewals).contains(RenewalResult.RENEWED);
        // the last renewal reached exactly the max hold, no further
        Instant leaseEnd = memory.find(request.key()).orElseThrow().leaseExpiresAt();
        assertThat(leaseEnd).isBefore(claimed.plus(maxHold).plusMillis(500));
        AtomicInteger runs = new AtomicInteger();
        IdempotentResult second =
                await().atMost(Duration.ofSeconds(10)).until(() -> tryExecute(request, runs), r -> r != null);
        assertThat(second.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(firstLease.get().isLost()).isTrue();
        finish.countDown();
        assertThat(first)
                .failsWithin(Duration.ofSeconds(10))
                .withThrowableThat()
                .havingRootCause()
                .isInstanceOf(LeaseLostException.class);
        assertThat(renewals).containsOnlyOnce(RenewalResult.MAX_HOLD);
    }

    @Test
    void aRenewalTheStoreDoesNotAnswerIsRetriedReportedAndShownToTheAction() throws Exception {
        IdempotencyRequest request = request(KeepAlive.ofDefaults());
        store.failRenewals = true;
        IdempotentResult result = engine.execute(request, lease -> {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> renewals.stream()
                                    .filter(RenewalResult.FAILED::equals)
                                    .count()
                            >= 2);
            // unanswered past the lease end: the action learns that another owner may take over
            await().atMost(Duration.ofSeconds(10)).until(lease::isLost);
            store.failRenewals = false;
            await().atMost(Duration.ofSeconds(10)).until(() -> renewals.contains(RenewalResult.RENEWED));
            assertThat(lease.isLost()).as("stays in doubt once past its end").isTrue();
            return Outcome.complete(created);
        });
        // nobody took over meanwhile: the outcome is recorded, the caller gets the action's answer
        assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(result.response()).isEqualTo(created);
        assertThat(events).containsExactly("recorded");
    }

    @Test
    void aRenewalTheStoreRefusesEndsTheKeepAliveAndTheOutcomeIsNotRecorded() throws Exception {
        IdempotencyRequest request = request(KeepAlive.ofDefaults());
        CountDownLatch renewalsBlocked = new CountDownLatch(1);
        store.blockRenewals = new CountDownLatch(1);
        store.renewalBlocked = renewalsBlocked;
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> engine.execute(request, lease -> {
                    runs.incrementAndGet();
                    // the keep-alive stalls (its renewal hangs); the lease runs out and another process takes over
                    assertThat(renewalsBlocked.await(10, TimeUnit.SECONDS)).isTrue();
                    await().atMost(Duration.ofSeconds(10)).until(lease::isLost);
                    IdempotencyEngine other = IdempotencyEngine.builder(memory).build();
                    IdempotentResult taken = await().atMost(Duration.ofSeconds(10))
                            .until(() -> tryExecute(other, request, runs), r -> r != null);
                    assertThat(taken.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
                    store.blockRenewals.countDown(); // the stalled renewal reaches the store now, too late
                    await().atMost(Duration.ofSeconds(10)).until(() -> renewals.contains(RenewalResult.LOST));
                    return Outcome.complete(
                            StoredResponse.of(201, "{\"id\":\"late\"}".getBytes(StandardCharsets.UTF_8)));
                }))
                .isInstanceOf(LeaseLostException.class);
        assertThat(runs).hasValue(2);
        assertThat(events).containsExactly("leaseLost");
        assertThat(memory.find(request.key()).orElseThrow().response()).isEqualTo(created);
        int lastCount = store.renewals.get();
        await().during(LEASE).atMost(LEASE.plusSeconds(5)).until(() -> store.renewals.get() == lastCount);
    }

    @Test
    void anActionRenewingForLongerIsNotCutShortByTheKeepAlive() throws Exception {
        IdempotencyRequest request = request(KeepAlive.ofDefaults());
        engine.execute(request, lease -> {
            assertThat(lease.renew(Duration.ofSeconds(30))).isTrue();
            int manual = store.renewals.get();
            // two keep-alive intervals pass without a renewal that would shorten the 30 s
            await().during(LEASE).atMost(LEASE.plusSeconds(5)).until(() -> store.renewals.get() == manual);
            Instant leaseEnd = memory.find(request.key()).orElseThrow().leaseExpiresAt();
            assertThat(leaseEnd).isAfter(Instant.now().plusSeconds(25));
            return Outcome.complete(created);
        });
        assertThat(renewals).containsOnly(RenewalResult.RENEWED);
    }

    @Test
    void aStandaloneKeeperRenewsUntilClosed() throws Exception {
        ScopeKey key = new Scope(
                        "acme",
                        "POST",
                        "/v1/charges",
                        new IdempotencyKey(UUID.randomUUID().toString()))
                .toScopeKey();
        Fingerprint fp = new Fingerprint("sha256-jcs", "abc");
        ClaimOutcome.Claimed claimed = (ClaimOutcome.Claimed) memory.claim(key, fp, LEASE, RETENTION);
        List<RenewalResult> seen = new CopyOnWriteArrayList<>();
        try (LeaseKeeper keeper =
                LeaseKeeper.start(memory, key, claimed.owner(), LEASE, KeepAlive.ofDefaults(), seen::add)) {
            await().during(LEASE.multipliedBy(3))
                    .atMost(LEASE.multipliedBy(3).plusSeconds(10))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> memory.claim(key, fp, LEASE, RETENTION) instanceof ClaimOutcome.InFlight);
            assertThat(keeper.isLost()).isFalse();
        }
        assertThat(seen).contains(RenewalResult.RENEWED).containsOnly(RenewalResult.RENEWED);
        // closed: the lease runs out and another owner takes over
        await().atMost(Duration.ofSeconds(10))
                .until(() -> memory.claim(key, fp, LEASE, RETENTION) instanceof ClaimOutcome.Claimed c && c.takeover());
    }

    @Test
    void aKeeperDueBeforeTheOthersIsRenewedOnTimeAndAClosedOneNever() throws Exception {
        Fingerprint fp = new Fingerprint("sha256-jcs", "abc");
        Duration longLease = Duration.ofMinutes(1);
        ScopeKey waitingKey = new Scope(
                        "acme",
                        "POST",
                        "/v1/charges",
                        new IdempotencyKey(UUID.randomUUID().toString()))
                .toScopeKey();
        ScopeKey closedKey = new Scope(
                        "acme",
                        "POST",
                        "/v1/charges",
                        new IdempotencyKey(UUID.randomUUID().toString()))
                .toScopeKey();
        ScopeKey shortKey = new Scope(
                        "acme",
                        "POST",
                        "/v1/charges",
                        new IdempotencyKey(UUID.randomUUID().toString()))
                .toScopeKey();
        OwnerToken waitingOwner = ((ClaimOutcome.Claimed) memory.claim(waitingKey, fp, longLease, RETENTION)).owner();
        OwnerToken closedOwner = ((ClaimOutcome.Claimed) memory.claim(closedKey, fp, LEASE, RETENTION)).owner();
        OwnerToken shortOwner = ((ClaimOutcome.Claimed) memory.claim(shortKey, fp, LEASE, RETENTION)).owner();
        List<RenewalResult> waiting = new CopyOnWriteArrayList<>();
        List<RenewalResult> closed = new CopyOnWriteArrayList<>();
        List<RenewalResult> shorter = new CopyOnWriteArrayList<>();
        // a keeper due in 20 s waits first: the sweeper sleeps until then, unless woken for an earlier one
        try (LeaseKeeper first =
                LeaseKeeper.start(memory, waitingKey, waitingOwner, longLease, KeepAlive.ofDefaults(), waiting::add)) {
            LeaseKeeper.start(memory, closedKey, closedOwner, LEASE, KeepAlive.ofDefaults(), closed::add)
                    .close();
            try (LeaseKeeper later =
                    LeaseKeeper.start(memory, shortKey, shortOwner, LEASE, KeepAlive.ofDefaults(), shorter::add)) {
                await().during(LEASE.multipliedBy(3))
                        .atMost(LEASE.multipliedBy(3).plusSeconds(10))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> memory.claim(shortKey, fp, LEASE, RETENTION) instanceof ClaimOutcome.InFlight);
                assertThat(later.isLost()).isFalse();
            }
            assertThat(first.isLost()).isFalse();
        }
        assertThat(shorter).contains(RenewalResult.RENEWED).containsOnly(RenewalResult.RENEWED);
        assertThat(waiting).as("not due yet").isEmpty();
        assertThat(closed).as("closed before its first renewal").isEmpty();
        assertThat(memory.claim(closedKey, fp, LEASE, RETENTION))
                .as("its lease ran out unrenewed")
                .isInstanceOfSatisfying(
                        ClaimOutcome.Claimed.class,
                        c -> assertThat(c.takeover()).isTrue());
    }

    private IdempotentResult tryExecute(IdempotencyRequest request, AtomicInteger runs) throws Exception {
        return tryExecute(engine, request, runs);
    }

    /** One attempt of a retry: its result once it may run, null while the key is in flight. */
    private IdempotentResult tryExecute(IdempotencyEngine with, IdempotencyRequest request, AtomicInteger runs)
            throws Exception {
        try {
            return with.execute(request, lease -> {
                runs.incrementAndGet();
                return Outcome.complete(created);
            });
        } catch (RequestInFlightException inFlight) {
            return null;
        }
    }

    private interface Call<T> {
        T call() throws Exception;
    }

    private static <T> T call(Call<T> call) {
        try {
            return call.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new java.util.concurrent.CompletionException(e);
        }
    }

    /** The in-memory store, counting renewals, and failing or holding them on demand. */
    static final class CountingStore extends ForwardingIdempotencyStore {
        final AtomicInteger renewals = new AtomicInteger();
        volatile boolean failRenewals;
        volatile CountDownLatch blockRenewals;
        volatile CountDownLatch renewalBlocked;

        CountingStore(InMemoryIdempotencyStore delegate) {
            super(delegate);
        }

        @Override
        public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
            renewals.incrementAndGet();
            if (failRenewals) {
                throw new StoreUnavailableException("store timed out", null);
            }
            CountDownLatch block = blockRenewals;
            if (block != null && block.getCount() > 0) {
                renewalBlocked.countDown();
                try {
                    block.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StoreUnavailableException("interrupted", e);
                }
            }
            return super.renew(key, owner, lease);
        }
    }
}
