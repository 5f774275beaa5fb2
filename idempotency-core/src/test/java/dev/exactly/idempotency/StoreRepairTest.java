package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.IdempotencyListener.Repair;
import dev.exactly.idempotency.IdempotencyListener.RepairResult;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A store that does not answer may still have applied the write. These tests make the store apply a
 * write and then fail to answer (as a timeout after the server did the work), or fail without applying
 * it, and check what the caller is told and what the engine repairs afterwards.
 */
class StoreRepairTest {
    private final InMemoryIdempotencyStore memory = InMemoryIdempotencyStore.create();
    private final StallingStore store = new StallingStore(memory);
    private final List<String> repairs = new CopyOnWriteArrayList<>();
    private final IdempotencyEngine engine = IdempotencyEngine.builder(store)
            .listener(new IdempotencyListener() {
                @Override
                public void onRepair(IdempotencyRequest request, Repair repair, RepairResult result) {
                    repairs.add(repair + ":" + result);
                }
            })
            .build();
    private final IdempotencyRequest request = IdempotencyRequest.of(
            new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("k-1")),
            new Fingerprint("sha256-jcs", "abc"),
            IdempotencyPolicy.custom()
                    .lease(Duration.ofSeconds(30))
                    .retention(Duration.ofHours(1))
                    .build());
    private final StoredResponse created = StoredResponse.of(201, "{\"id\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8));

    @Test
    void aClaimWhoseAnswerWasLostIsReleasedByItsTokenOnceTheStoreAnswers() throws Exception {
        store.stall("claim", Mode.APPLY_THEN_FAIL);
        store.stall("release", Mode.FAIL); // the store is still unreachable for the first repair attempts
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> engine.execute(request, lease -> {
                    runs.incrementAndGet();
                    return Outcome.complete(created);
                }))
                .isInstanceOf(StoreUnavailableException.class);
        assertThat(runs).hasValue(0);
        // the store took the key although nobody heard it say so: without the repair it would be held 30 s
        assertThat(memory.find(request.key()).orElseThrow().status()).isEqualTo(RecordStatus.PROCESSING);

        await().atMost(Duration.ofSeconds(5)).until(() -> store.attempts("release") >= 2);
        store.recover();
        await().atMost(Duration.ofSeconds(5)).until(() -> repairs.contains("UNDO_CLAIM:APPLIED"));
        assertThat(memory.find(request.key())).isEmpty();

        IdempotentResult retry = engine.execute(request, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(created);
        });
        assertThat(retry.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(runs).hasValue(1);
    }

    @Test
    void undoingAClaimThatNeverLandedChangesNothingAndNeverTouchesAnotherOwner() throws Exception {
        store.stall("claim", Mode.FAIL);
        assertThatThrownBy(() -> engine.execute(request, lease -> Outcome.complete(created)))
                .isInstanceOf(StoreUnavailableException.class);
        store.recover();
        // another request claims the key before the repair runs: the repair's token is not its token
        ClaimOutcome other =
                memory.claim(request.key(), request.fingerprint(), Duration.ofSeconds(30), Duration.ofHours(1));
        assertThat(other).isInstanceOf(ClaimOutcome.Claimed.class);
        await().atMost(Duration.ofSeconds(5)).until(() -> repairs.contains("UNDO_CLAIM:NOT_NEEDED"));
        assertThat(memory.find(request.key()).orElseThrow().owner()).isEqualTo(((ClaimOutcome.Claimed) other).owner());
    }

    @Test
    void anActionWhoseOutcomeCouldNotBeRecordedStillAnswersWithItsOwnResponseAndIsRecordedLater() throws Exception {
        store.stall("complete", Mode.FAIL);
        AtomicInteger runs = new AtomicInteger();
        IdempotentResult result = engine.execute(request, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(created);
        });
        assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.UNRECORDED);
        assertThat(result.response()).isEqualTo(created);
        assertThat(result.expiresAt()).isNull();

        // meanwhile a retry finds the key in flight: it never runs the action a second time
        assertThatThrownBy(() -> engine.execute(request, lease -> {
                    runs.incrementAndGet();
                    return Outcome.complete(created);
                }))
                .isInstanceOf(RequestInFlightException.class);

        store.recover();
        await().atMost(Duration.ofSeconds(5)).until(() -> repairs.contains("RECORD:APPLIED"));
        IdempotentResult replay = engine.execute(request, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(created);
        });
        assertThat(replay.replayed()).isTrue();
        assertThat(replay.response()).isEqualTo(created);
        assertThat(runs).hasValue(1);
    }

    @Test
    void aReleaseThatFailedIsRepairedSoTheClientCanRetry() throws Exception {
        store.stall("release", Mode.APPLY_THEN_FAIL);
        StoredResponse invalid = StoredResponse.of(422, "{}".getBytes(StandardCharsets.UTF_8));
        IdempotentResult result = engine.execute(request, lease -> Outcome.release(invalid));
        assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.RELEASED);
        assertThat(result.response()).isEqualTo(invalid);
        store.recover();
        // the first release was applied: the repair finds nothing of its own left to release
        await().atMost(Duration.ofSeconds(5)).until(() -> repairs.contains("RELEASE:NOT_NEEDED"));
        assertThat(engine.execute(request, lease -> Outcome.complete(created)).kind())
                .isEqualTo(IdempotentResult.Kind.EXECUTED);
    }

    @Test
    void aStoreThatRefusedUpFrontIsNotUndone() {
        InMemoryIdempotencyStore full = InMemoryIdempotencyStore.create(java.time.InstantSource.system(), 1);
        full.claim(
                new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("other")).toScopeKey(),
                request.fingerprint(),
                Duration.ofSeconds(30),
                Duration.ofHours(1));
        IdempotencyEngine onFull = IdempotencyEngine.builder(full)
                .listener(new IdempotencyListener() {
                    @Override
                    public void onRepair(IdempotencyRequest r, Repair repair, RepairResult result) {
                        repairs.add(repair + ":" + result);
                    }
                })
                .build();
        assertThatThrownBy(() -> onFull.execute(request, lease -> Outcome.complete(created)))
                .isInstanceOfSatisfying(
                        StoreUnavailableException.class,
                        e -> assertThat(e.mayHaveApplied()).isFalse());
        assertThat(repairs).isEmpty();
    }

    enum Mode {
        FAIL,
        APPLY_THEN_FAIL
    }

    /** Forwards to a real store; a stalled operation fails (after applying it, in APPLY_THEN_FAIL mode). */
    static final class StallingStore extends ForwardingIdempotencyStore {
        private final java.util.Map<String, Mode> stalled = new java.util.concurrent.ConcurrentHashMap<>();
        private final java.util.Map<String, AtomicInteger> attempts = new java.util.concurrent.ConcurrentHashMap<>();

        StallingStore(IdempotencyStore delegate) {
            super(delegate);
        }

        void stall(String operation, Mode mode) {
            stalled.put(operation, mode);
        }

        void recover() {
            stalled.clear();
        }

        int attempts(String operation) {
            return attempts.computeIfAbsent(operation, o -> new AtomicInteger()).get();
        }

        private <T> T call(String operation, Supplier<T> write) {
            attempts.computeIfAbsent(operation, o -> new AtomicInteger()).incrementAndGet();
            Mode mode = stalled.get(operation);
            if (mode == null) {
                return write.get();
            }
            if (mode == Mode.APPLY_THEN_FAIL) {
                T unused = write.get(); // applied, and then the answer is lost
            }
            throw new StoreUnavailableException("command timed out (" + operation + ")", null);
        }

        @Override
        public ClaimOutcome claim(
                ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
            return call("claim", () -> super.claim(key, fingerprint, owner, lease, retention));
        }

        @Override
        public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
            return call("complete", () -> super.complete(key, owner, outcome, response));
        }

        @Override
        public boolean release(ScopeKey key, OwnerToken owner) {
            return call("release", () -> super.release(key, owner));
        }
    }
}
