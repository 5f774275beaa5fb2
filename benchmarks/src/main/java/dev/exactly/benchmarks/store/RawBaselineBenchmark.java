package dev.exactly.benchmarks.store;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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
 * The physical floor on the server behind each store, through the same client stack and pool
 * ({@link RawBaseline}): {@link #twoRoundTrips} is what a fresh key must cost at least (claim, then
 * record), {@link #oneRoundTrip} what a replay must cost at least (one read).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(StoreBenchmark.THREADS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RawBaselineBenchmark extends StoreState {
    /** The value a fresh key stores: the guarded operation's response body. */
    static final byte[] VALUE = GuardedWorkload.RESPONSE_JSON.getBytes(StandardCharsets.UTF_8);

    /** The server: {@code redis}, {@code redis-cluster} or {@code postgres}. */
    @Param({"redis", "redis-cluster", "postgres"})
    public String store = "redis";

    private @Nullable RawBaseline raw;
    private List<String> readKeys = List.of();

    @Setup(Level.Trial)
    public void open(BenchmarkParams params) {
        open(params.getThreads(), params.getBenchmark().endsWith(".oneRoundTrip") ? StoreBenchmark.REPLAY_KEYS : 0);
    }

    /** Opens the server's fixture with one connection per thread, and writes {@code readKeys} keys to read. */
    public void open(int threads, int readKeys) {
        RawBaseline opened = openFixture(store, threads).raw();
        raw = opened;
        List<String> keys = new ArrayList<>(readKeys);
        String prefix = "read-" + StoreFixture.runId() + "-";
        for (int i = 0; i < readKeys; i++) {
            String key = prefix + i;
            if (!opened.claim(key) || !opened.finish(key, VALUE)) {
                throw new IllegalStateException("could not prepare key " + key);
            }
            keys.add(key);
        }
        this.readKeys = List.copyOf(keys);
    }

    @Benchmark
    public boolean twoRoundTrips(KeySequence keys) {
        String key = keys.next();
        RawBaseline baseline = raw();
        if (!baseline.claim(key)) {
            throw new IllegalStateException("fresh key " + key + " already existed");
        }
        if (!baseline.finish(key, VALUE)) {
            throw new IllegalStateException("claimed key " + key + " vanished");
        }
        return true;
    }

    @Benchmark
    public byte[] oneRoundTrip(KeySequence keys) {
        String key = readKeys.get(keys.nextIndex(readKeys.size()));
        byte[] value = raw().read(key);
        if (value == null) {
            throw new IllegalStateException("prepared key " + key + " is gone");
        }
        return value;
    }

    /** The open baseline. */
    public RawBaseline raw() {
        return Objects.requireNonNull(raw, "open() first");
    }
}
