package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;
import org.jspecify.annotations.Nullable;

/**
 * Stateful property test: random chains of claim / complete / fail / release / renew / advance-clock /
 * concurrent-duplicate against the engine and the in-memory store, compared after every step with a
 * plain model of BRIEF §3's state machine.
 */
class EngineModelTest {
    private static final int KEYS = 3;
    private static final int FINGERPRINTS = 2;
    private static final long LEASE_MS = 1_000;
    private static final long RETENTION_MS = 5_000;
    private static final ExecutorService POOL = Executors.newFixedThreadPool(4);

    @AfterContainer
    static void shutdown() {
        POOL.shutdownNow();
    }

    /** The model's view of one key. */
    record Model(
            RecordStatus status,
            int fingerprint,
            OwnerToken owner,
            long leaseEnd,
            long expiresAt,
            @Nullable StoredResponse response) {}

    /** The system under test and the model, side by side. */
    static final class World {
        final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        final InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(clock, 1_000);
        final IdempotencyEngine engine =
                IdempotencyEngine.builder(store).clock(clock).build();
        final Map<Integer, Model> model = new HashMap<>();
        final Map<Integer, List<OwnerToken>> staleOwners = new HashMap<>();
        final List<Scope> scopes = new ArrayList<>();
        int responses;

        World() {
            for (int i = 0; i < KEYS; i++) {
                scopes.add(new Scope("tenant", "POST", "/v1/charges", new IdempotencyKey("key-" + i)));
            }
        }

        long now() {
            return clock.instant().toEpochMilli();
        }

        ScopeKey key(int i) {
            return scopes.get(i).toScopeKey();
        }

        static Fingerprint fingerprint(int f) {
            return new Fingerprint("sha256-jcs", "fp" + f);
        }

        /** The live model record of a key, after dropping an expired one. */
        @Nullable
        Model live(int k) {
            Model m = model.get(k);
            if (m != null && now() >= m.expiresAt()) {
                model.remove(k);
                if (m.status() == RecordStatus.PROCESSING) {
                    staleOwners.computeIfAbsent(k, x -> new ArrayList<>()).add(m.owner());
                }
                return null;
            }
            return m;
        }

        StoredResponse nextResponse(int status) {
            return new StoredResponse(
                    status,
                    Map.of("content-type", List.of("application/json")),
                    ("{\"n\":" + ++responses + "}").getBytes(StandardCharsets.UTF_8));
        }

        OwnerToken owner(int k, boolean current) {
            Model m = live(k);
            if (current && m != null) {
                return m.owner();
            }
            List<OwnerToken> stale = staleOwners.getOrDefault(k, List.of());
            return stale.isEmpty() ? OwnerToken.random() : stale.getLast();
        }

        boolean ownedBy(int k, OwnerToken owner) {
            Model m = live(k);
            return m != null
                    && m.status() == RecordStatus.PROCESSING
                    && m.owner().equals(owner);
        }

        void retire(int k) {
            Model m = model.get(k);
            if (m != null && m.status() == RecordStatus.PROCESSING) {
                staleOwners.computeIfAbsent(k, x -> new ArrayList<>()).add(m.owner());
            }
        }
    }

    @Property(tries = 500)
    void engineFollowsTheModel(@ForAll("chains") ActionChain<World> chain) {
        chain.withInvariant("store equals model", EngineModelTest::checkInvariant)
                .run();
    }

    @Provide
    Arbitrary<ActionChain<World>> chains() {
        return ActionChain.startWith(World::new)
                .withAction(4, new ClaimAction())
                .withAction(2, new FinishAction())
                .withAction(1, new ReleaseAction())
                .withAction(1, new RenewAction())
                .withAction(2, new AdvanceClockAction())
                .withAction(2, new ConcurrentDuplicateAction())
                .withMaxTransformations(30);
    }

    static void checkInvariant(World w) {
        for (int k = 0; k < KEYS; k++) {
            Model m = w.live(k);
            var found = w.store.find(w.key(k));
            if (m == null) {
                assertThat(found).as("key %d absent", k).isEmpty();
                continue;
            }
            assertThat(found).as("key %d present", k).isPresent();
            IdempotencyRecord r = found.get();
            assertThat(r.status()).isEqualTo(m.status());
            assertThat(r.fingerprint()).isEqualTo(World.fingerprint(m.fingerprint()));
            assertThat(r.owner()).isEqualTo(m.owner());
            assertThat(r.expiresAt().toEpochMilli()).isEqualTo(m.expiresAt());
            assertThat(r.response()).isEqualTo(m.response());
            if (m.status() == RecordStatus.PROCESSING) {
                assertThat(r.leaseExpiresAt()).isNotNull();
                assertThat(r.leaseExpiresAt().toEpochMilli()).isEqualTo(m.leaseEnd());
                assertThat(r.expiresAt()).isAfterOrEqualTo(r.leaseExpiresAt());
            } else {
                assertThat(r.response()).isNotNull();
            }
        }
    }

    static final class ClaimAction implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return Arbitraries.integers()
                    .between(0, KEYS - 1)
                    .flatMap(k -> Arbitraries.integers()
                            .between(0, FINGERPRINTS - 1)
                            .map(f -> Transformer.mutate("claim(k" + k + ", fp" + f + ")", w -> claim(w, k, f))));
        }

        private static void claim(World w, int k, int f) {
            Model m = w.live(k);
            long now = w.now();
            ClaimOutcome outcome = w.store.claim(
                    w.key(k), World.fingerprint(f), Duration.ofMillis(LEASE_MS), Duration.ofMillis(RETENTION_MS));
            if (m == null) {
                assertThat(outcome)
                        .isInstanceOfSatisfying(
                                ClaimOutcome.Claimed.class,
                                c -> assertThat(c.takeover()).isFalse());
                w.model.put(
                        k,
                        new Model(
                                RecordStatus.PROCESSING,
                                f,
                                ((ClaimOutcome.Claimed) outcome).owner(),
                                now + LEASE_MS,
                                now + RETENTION_MS,
                                null));
            } else if (m.status().isFinished()) {
                assertThat(outcome).isInstanceOf(ClaimOutcome.Finished.class);
            } else if (now >= m.leaseEnd() && m.fingerprint() == f) {
                assertThat(outcome)
                        .isInstanceOfSatisfying(
                                ClaimOutcome.Claimed.class,
                                c -> assertThat(c.takeover()).isTrue());
                OwnerToken owner = ((ClaimOutcome.Claimed) outcome).owner();
                assertThat(owner).isNotEqualTo(m.owner());
                w.retire(k);
                w.model.put(k, new Model(RecordStatus.PROCESSING, f, owner, now + LEASE_MS, now + RETENTION_MS, null));
            } else {
                assertThat(outcome).isInstanceOf(ClaimOutcome.InFlight.class);
            }
        }
    }

    static final class FinishAction implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return Arbitraries.integers()
                    .between(0, KEYS - 1)
                    .flatMap(k -> Arbitraries.of(true, false)
                            .flatMap(current -> Arbitraries.of(RecordStatus.COMPLETED, RecordStatus.FAILED)
                                    .map(status -> Transformer.mutate(
                                            (status == RecordStatus.COMPLETED ? "complete" : "fail") + "(k" + k
                                                    + (current ? ", owner" : ", stale") + ")",
                                            w -> finish(w, k, current, status)))));
        }

        private static void finish(World w, int k, boolean current, RecordStatus status) {
            OwnerToken owner = w.owner(k, current);
            boolean expected = w.ownedBy(k, owner);
            StoredResponse response = w.nextResponse(status == RecordStatus.COMPLETED ? 201 : 402);
            assertThat(w.store.complete(w.key(k), owner, status, response)).isEqualTo(expected);
            if (expected) {
                Model m = w.model.get(k);
                w.model.put(k, new Model(status, m.fingerprint(), owner, 0, w.now() + RETENTION_MS, response));
            }
        }
    }

    static final class ReleaseAction implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return Arbitraries.integers()
                    .between(0, KEYS - 1)
                    .flatMap(k -> Arbitraries.of(true, false)
                            .map(current ->
                                    Transformer.mutate("release(k" + k + (current ? ", owner" : ", stale") + ")", w -> {
                                        OwnerToken owner = w.owner(k, current);
                                        boolean expected = w.ownedBy(k, owner);
                                        assertThat(w.store.release(w.key(k), owner))
                                                .isEqualTo(expected);
                                        if (expected) {
                                            w.retire(k);
                                            w.model.remove(k);
                                        }
                                    })));
        }
    }

    static final class RenewAction implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return Arbitraries.integers()
                    .between(0, KEYS - 1)
                    .flatMap(k -> Arbitraries.of(true, false)
                            .flatMap(current -> Arbitraries.longs()
                                    .between(100, 8_000)
                                    .map(lease -> Transformer.mutate(
                                            "renew(k" + k + (current ? ", owner" : ", stale") + ", " + lease + "ms)",
                                            w -> {
                                                OwnerToken owner = w.owner(k, current);
                                                boolean expected = w.ownedBy(k, owner);
                                                assertThat(w.store.renew(w.key(k), owner, Duration.ofMillis(lease)))
                                                        .isEqualTo(expected);
                                                if (expected) {
                                                    Model m = w.model.get(k);
                                                    long leaseEnd = w.now() + lease;
                                                    w.model.put(
                                                            k,
                                                            new Model(
                                                                    m.status(),
                                                                    m.fingerprint(),
                                                                    owner,
                                                                    leaseEnd,
                                                                    Math.max(m.expiresAt(), leaseEnd),
                                                                    null));
                                                }
                                            }))));
        }
    }

    static final class AdvanceClockAction implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return Arbitraries.longs()
                    .between(0, 3_000)
                    .map(ms ->
                            Transformer.mutate("advance(" + ms + "ms)", w -> w.clock.advance(Duration.ofMillis(ms))));
        }
    }

    /** Four threads send the same request at once through the engine (reject policy). */
    static final class ConcurrentDuplicateAction implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return Arbitraries.integers()
                    .between(0, KEYS - 1)
                    .flatMap(k -> Arbitraries.integers()
                            .between(0, FINGERPRINTS - 1)
                            .map(f -> Transformer.mutate(
                                    "duplicates(k" + k + ", fp" + f + ")", w -> duplicates(w, k, f))));
        }

        private static void duplicates(World w, int k, int f) {
            Model before = w.live(k);
            long now = w.now();
            IdempotencyPolicy policy = IdempotencyPolicy.custom()
                    .lease(Duration.ofMillis(LEASE_MS))
                    .retention(Duration.ofMillis(RETENTION_MS))
                    .build();
            IdempotencyRequest request = IdempotencyRequest.of(w.scopes.get(k), World.fingerprint(f), policy);
            StoredResponse response = w.nextResponse(201);
            AtomicInteger runs = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            List<Future<String>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                results.add(POOL.submit(() -> {
                    start.await();
                    try {
                        IdempotentResult r = w.engine.execute(request, lease -> {
                            runs.incrementAndGet();
                            return Outcome.complete(response);
                        });
                        return r.kind().name();
                    } catch (IdempotencyException e) {
                        return e.code();
                    }
                }));
            }
            start.countDown();
            List<String> kinds = new ArrayList<>();
            for (Future<String> result : results) {
                try {
                    kinds.add(result.get(10, TimeUnit.SECONDS));
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
            boolean runnable = before == null
                    || (before.status() == RecordStatus.PROCESSING
                            && now >= before.leaseEnd()
                            && before.fingerprint() == f);
            if (before != null && before.fingerprint() != f) {
                assertThat(kinds).containsOnly("idempotency_key_reused");
                assertThat(runs).hasValue(0);
            } else if (runnable) {
                assertThat(runs).hasValue(1);
                assertThat(kinds).containsOnlyOnce("EXECUTED");
                assertThat(kinds)
                        .allMatch(s ->
                                s.equals("EXECUTED") || s.equals("REPLAYED") || s.equals("idempotency_key_in_use"));
                w.retire(k);
                w.model.put(
                        k,
                        new Model(
                                RecordStatus.COMPLETED,
                                f,
                                w.store.find(w.key(k)).orElseThrow().owner(),
                                0,
                                now + RETENTION_MS,
                                response));
            } else if (before.status().isFinished()) {
                assertThat(kinds).containsOnly("REPLAYED");
                assertThat(runs).hasValue(0);
            } else {
                assertThat(kinds).containsOnly("idempotency_key_in_use");
                assertThat(runs).hasValue(0);
            }
        }
    }
}
