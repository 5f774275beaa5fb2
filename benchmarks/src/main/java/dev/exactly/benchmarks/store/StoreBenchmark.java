package dev.exactly.benchmarks.store;

import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotentResult;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Guarded operations per second on each store: {@link #guarded} (claim and complete a fresh key) and
 * {@link #replay} (a completed key), {@value #THREADS} threads by default. Compare with
 * {@link RawBaselineBenchmark}, which runs in the same JMH run.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(StoreBenchmark.THREADS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class StoreBenchmark extends StoreState {
    /** Benchmark threads (JMH {@code -t} overrides it). */
    public static final int THREADS = 16;
    /** Keys completed before a replay trial. */
    public static final int REPLAY_KEYS = 4096;

    /** The store: {@code memory}, {@code redis}, {@code redis-cluster} or {@code postgres}. */
    @Param({"memory", "redis", "redis-cluster", "postgres"})
    public String store = "memory";

    private @Nullable GuardedWorkload workload;

    @Setup(Level.Trial)
    public void open(BenchmarkParams params) throws Exception {
        open(params.getThreads(), params.getBenchmark().endsWith(".replay") ? REPLAY_KEYS : 0, null);
    }

    /**
     * Opens the store with one connection per thread and completes {@code replayKeys} keys for
     * {@link #replay}; {@code freshPolicy}, if given, replaces the fixture's policy of fresh keys (a check
     * that replays them afterwards needs a longer retention).
     */
    void open(int threads, int replayKeys, @Nullable IdempotencyPolicy freshPolicy) throws Exception {
        StoreFixture opened = openFixture(store, threads);
        try {
            GuardedWorkload bodies =
                    new GuardedWorkload(opened.engine(), freshPolicy != null ? freshPolicy : opened.freshKeyPolicy());
            if (replayKeys > 0) {
                bodies.prepareReplayKeys("replay-" + StoreFixture.runId() + "-", replayKeys, threads);
            }
            workload = bodies;
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    @Benchmark
    public IdempotentResult guarded(KeySequence keys) throws Exception {
        return workload().guarded(keys.next());
    }

    @Benchmark
    public IdempotentResult replay(KeySequence keys) throws Exception {
        GuardedWorkload bodies = workload();
        return bodies.replay(keys.nextIndex(bodies.replayKeyCount()));
    }

    /** The benchmark bodies of the open store. */
    public GuardedWorkload workload() {
        return Objects.requireNonNull(workload, "open() first");
    }
}
