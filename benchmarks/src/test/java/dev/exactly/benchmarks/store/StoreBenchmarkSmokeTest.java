package dev.exactly.benchmarks.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.testing.Ci;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Runs each store benchmark body briefly on real threads and checks correctness only: operations
 * happened, none failed, every guarded key ran once and is replayed afterwards, and the raw baselines
 * really claim each key once, update only claimed keys and read back what they stored. Never speed.
 */
class StoreBenchmarkSmokeTest {
    private static final int THREADS = 4;
    private static final int OPS = 100;
    private static final int REPLAY_KEYS = 64;
    /** Long enough that no record of the check expires before it is replayed. */
    private static final IdempotencyPolicy CHECK_POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30))
            .retention(Duration.ofMinutes(10))
            .build();

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void guardedKeysRunOnceAndReplaysDoNotRun(StoreKind kind) throws Exception {
        requireCluster(kind);
        StoreBenchmark benchmark = new StoreBenchmark();
        benchmark.store = kind.id();
        benchmark.open(THREADS, REPLAY_KEYS, CHECK_POLICY);
        try {
            GuardedWorkload workload = benchmark.workload();
            assertThat(workload.executions()).isEqualTo(REPLAY_KEYS);

            List<KeySequence> sequences = onThreads(keys -> {
                for (int i = 0; i < OPS; i++) {
                    assertThat(benchmark.guarded(keys).kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
                    assertThat(benchmark.replay(keys).replayed()).isTrue();
                }
            });
            long executed = workload.executions();
            assertThat(executed).isEqualTo(REPLAY_KEYS + (long) THREADS * OPS);

            // every guarded key ran once: running it again replays its recorded outcome
            for (KeySequence keys : sequences) {
                assertThat(keys.issuedCount()).isEqualTo(OPS);
                for (int i = 0; i < OPS; i++) {
                    assertThat(workload.execute(keys.issued(i)).kind()).isEqualTo(IdempotentResult.Kind.REPLAYED);
                }
            }
            assertThat(workload.executions()).isEqualTo(executed);
        } finally {
            benchmark.close();
        }
    }

    @ParameterizedTest
    @EnumSource(value = StoreKind.class, names = "MEMORY", mode = EnumSource.Mode.EXCLUDE)
    void rawBaselineWritesEachFreshKeyOnceAndReadsItBack(StoreKind kind) throws Exception {
        requireCluster(kind);
        RawBaselineBenchmark benchmark = new RawBaselineBenchmark();
        benchmark.store = kind.id();
        benchmark.open(THREADS, REPLAY_KEYS);
        try {
            List<KeySequence> sequences = onThreads(keys -> {
                for (int i = 0; i < OPS; i++) {
                    assertThat(benchmark.twoRoundTrips(keys)).isTrue();
                    assertThat(benchmark.oneRoundTrip(keys)).isEqualTo(RawBaselineBenchmark.VALUE);
                }
            });
            RawBaseline raw = benchmark.raw();
            for (KeySequence keys : sequences) {
                assertThat(keys.issuedCount()).isEqualTo(OPS);
                for (int i = 0; i < OPS; i++) {
                    String key = keys.issued(i);
                    assertThat(raw.claim(key)).as("second claim of a key").isFalse();
                    assertThat(raw.read(key)).as("the value of " + key).isEqualTo(RawBaselineBenchmark.VALUE);
                }
            }
            assertThat(raw.finish("never-claimed-" + StoreFixture.runId(), RawBaselineBenchmark.VALUE))
                    .as("finish of a key nobody claimed")
                    .isFalse();
        } finally {
            benchmark.close();
        }
    }

    @FunctionalInterface
    private interface Body {
        void run(KeySequence keys) throws Exception;
    }

    /** Runs {@code body} on {@value #THREADS} threads at once, each with its own key sequence. */
    private static List<KeySequence> onThreads(Body body) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<KeySequence> sequences = new ArrayList<>();
        List<Future<?>> done = new ArrayList<>();
        try (ExecutorService threads = Executors.newFixedThreadPool(THREADS)) {
            for (int t = 0; t < THREADS; t++) {
                KeySequence keys = new KeySequence();
                sequences.add(keys);
                done.add(threads.submit((Callable<Void>) () -> {
                    start.await();
                    body.run(keys);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : done) {
                future.get();
            }
        }
        return sequences;
    }

    private static void requireCluster(StoreKind kind) {
        if (kind == StoreKind.REDIS_CLUSTER && !RedisCluster.available()) {
            if (Ci.strict()) {
                throw new IllegalStateException(
                        "redis-server is not on the PATH, and CI=true requires the cluster run");
            }
            Assumptions.abort("redis-server is not on the PATH: no local Redis Cluster");
        }
    }
}
