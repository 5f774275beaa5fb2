package dev.exactly.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.Signals;
import dev.exactly.testing.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Redis of this test's own is frozen with {@code SIGSTOP} while a request is at a chosen point, and
 * thawed with {@code SIGCONT}. A frozen Redis keeps its sockets open: commands time out on the client
 * and are then executed by the server when it runs again, so a "failed" claim or completion has in fact
 * been applied. The lease is 30 s; each test shows the key is free, or finished, within a few seconds of
 * the thaw instead of staying blocked for the lease.
 */
class RedisStallTest {
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(400);
    private static final IdempotencyPolicy POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30))
            .retention(Duration.ofMinutes(10))
            .build();

    private RedisProcess redis;
    private RedisIdempotencyStore store;
    private IdempotencyEngine engine;
    private final List<String> repairs = new CopyOnWriteArrayList<>();
    private final StoredResponse created = StoredResponse.of(201, "{\"id\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8));

    @BeforeEach
    void startOwnRedis(@TempDir Path workDir) {
        redis = RedisProcess.start(serverBinary(workDir), TestRedis.freePort(), List.of());
        store = RedisIdempotencyStore.create(
                "redis://127.0.0.1:" + redis.port(),
                RedisStoreConfig.custom()
                        .keyPrefix(RedisStoreTestSupport.uniquePrefix())
                        .commandTimeout(COMMAND_TIMEOUT)
                        .build());
        engine = IdempotencyEngine.builder(store)
                .listener(new IdempotencyListener() {
                    @Override
                    public void onRepair(IdempotencyRequest request, Repair repair, RepairResult result) {
                        repairs.add(repair + ":" + result);
                    }
                })
                .build();
        // connected, and the scripts loaded (a stalled EVALSHA of an unknown script would do nothing)
        IdempotencyRequest warmUp = request("warm-up");
        try {
            assertThat(engine.execute(warmUp, lease -> Outcome.complete(created))
                            .kind())
                    .isEqualTo(IdempotentResult.Kind.EXECUTED);
            assertThat(engine.execute(request("warm-up-release"), lease -> Outcome.release(created))
                            .kind())
                    .isEqualTo(IdempotentResult.Kind.RELEASED);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The server binary this test freezes. */
    Path serverBinary(Path workDir) {
        return TestRedis.redisServerBinary(workDir);
    }

    @AfterEach
    void stopOwnRedis() {
        if (redis != null) {
            Signals.resume(redis.pid());
            store.close();
            redis.stop();
            RedisClusterFixture.deleteTree(redis.dir());
        }
    }

    private IdempotencyRequest request(String key) {
        return IdempotencyRequest.of(
                new Scope("acme", "POST", "/v1/charges", new IdempotencyKey(key)),
                new Fingerprint("sha256-jcs", "f-" + key),
                POLICY);
    }

    @Test
    void aClaimThatTimedOutDuringAStallIsReleasedAfterItSoTheKeyIsBlockedForTheStallNotTheLease() throws Exception {
        IdempotencyRequest request = request("stalled-claim");
        AtomicInteger runs = new AtomicInteger();
        Signals.stop(redis.pid());
        assertThatThrownBy(() -> engine.execute(request, lease -> {
                    runs.incrementAndGet();
                    return Outcome.complete(created);
                }))
                .isInstanceOf(StoreUnavailableException.class);
        Signals.resume(redis.pid());

        // the server ran the claim when it woke up (UNDO_CLAIM:APPLIED proves it landed), and the engine
        // released it by its token
        await().atMost(Duration.ofSeconds(10)).until(() -> repairs.contains("UNDO_CLAIM:APPLIED"));
        assertThat(store.find(request.key())).isEmpty();
        IdempotentResult retry = engine.execute(request, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(created);
        });
        assertThat(retry.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(runs).hasValue(1);
    }

    @Test
    void whileTheStoreReadsFirstAStallFailsClosedAndRunsNothingAndEveryKeyIsAnsweredAfterIt() throws Exception {
        store.claimFirst("get", true);
        IdempotencyRequest finished = request("finished-before-the-stall");
        AtomicInteger runs = new AtomicInteger();
        assertThat(engine.execute(finished, lease -> {
                            runs.incrementAndGet();
                            return Outcome.complete(created);
                        })
                        .kind())
                .isEqualTo(IdempotentResult.Kind.EXECUTED);
        IdempotencyRequest fresh = request("fresh-during-the-stall");

        Signals.stop(redis.pid());
        assertThatThrownBy(() -> engine.execute(fresh, lease -> {
                    runs.incrementAndGet();
                    return Outcome.complete(created);
                }))
                .as("the read timed out: nothing was claimed, the handler not called")
                .isInstanceOf(StoreUnavailableException.class);
        assertThatThrownBy(() -> engine.execute(finished, lease -> {
                    runs.incrementAndGet();
                    return Outcome.complete(created);
                }))
                .as("a replay fails closed too")
                .isInstanceOf(StoreUnavailableException.class);
        Signals.resume(redis.pid());

        IdempotentResult replay = engine.execute(finished, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(StoredResponse.of(500, new byte[0]));
        });
        assertThat(replay.replayed()).isTrue();
        assertThat(replay.response().body()).isEqualTo(created.body());
        IdempotentResult retry = engine.execute(fresh, lease -> {
            runs.incrementAndGet();
            return Outcome.complete(created);
        });
        assertThat(retry.kind())
                .as("the key is free at once: the timed-out read took nothing")
                .isEqualTo(IdempotentResult.Kind.EXECUTED);
        assertThat(runs).hasValue(2);
        assertThat(store.claimsFirst()).isEqualTo("get");
    }

    @Test
    void anOutcomeThatCouldNotBeRecordedDuringAStallIsAnsweredAndRecordedAfterIt() throws Exception {
        IdempotencyRequest request = request("stalled-complete");
        IdempotentResult result = engine.execute(request, lease -> {
            Signals.stop(redis.pid()); // the action took effect; now the store freezes
            return Outcome.complete(created);
        });
        assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.UNRECORDED);
        assertThat(result.response()).isEqualTo(created);
        Signals.resume(redis.pid());

        await().atMost(Duration.ofSeconds(10))
                .until(() -> store.find(request.key())
                        .map(r -> r.status() == RecordStatus.COMPLETED)
                        .orElse(false));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> repairs.stream().anyMatch(r -> r.startsWith("RECORD:") && !r.endsWith("SCHEDULED")));
        assertThat(repairs).doesNotContain("RECORD:ABANDONED");
        IdempotentResult replay =
                engine.execute(request, lease -> Outcome.complete(StoredResponse.of(500, new byte[0])));
        assertThat(replay.replayed()).isTrue();
        assertThat(replay.response().body()).isEqualTo(created.body());
    }
}
