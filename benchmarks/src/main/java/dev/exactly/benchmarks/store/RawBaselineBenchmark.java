package dev.exactly.benchmarks.store;

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
 * The physical limit: one raw set-if-absent round trip per operation on the server behind each store,
 * through the same client stack and pool ({@code SET key value NX PX 30000} via Lettuce sync;
 * single-row {@code INSERT ... ON CONFLICT DO NOTHING} in autocommit via the Hikari pool).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(StoreBenchmark.THREADS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RawBaselineBenchmark extends StoreState {

    /** The server: {@code redis}, {@code redis-cluster} or {@code postgres}. */
    @Param({"redis", "redis-cluster", "postgres"})
    public String store = "redis";

    private @Nullable RawBaseline raw;

    @Setup(Level.Trial)
    public void open(BenchmarkParams params) {
        open(params.getThreads());
    }

    /** Opens the server's fixture with one connection per thread. */
    public void open(int threads) {
        raw = openFixture(store, threads).raw();
    }

    @Benchmark
    public boolean insertIfAbsent(KeySequence keys) {
        String key = keys.next();
        if (!Objects.requireNonNull(raw, "open() first").insertIfAbsent(key)) {
            throw new IllegalStateException("fresh key " + key + " already existed");
        }
        return true;
    }

    /** The open baseline. */
    public RawBaseline raw() {
        return Objects.requireNonNull(raw, "open() first");
    }
}
