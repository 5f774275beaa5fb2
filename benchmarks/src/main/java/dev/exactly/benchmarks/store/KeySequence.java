package dev.exactly.benchmarks.store;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Per-thread keys: {@link #next()} names a key no thread of this JVM used before, and
 * {@link #nextIndex(int)} walks the prepared keys from a random start. Not thread-safe: one per thread.
 */
@State(Scope.Thread)
public class KeySequence {
    private static final String RUN = StoreFixture.runId();
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final String prefix = "k-" + RUN + "-" + THREADS.incrementAndGet() + "-";
    private long issued;
    private int cursor = ThreadLocalRandom.current().nextInt(1 << 20);

    /** A fresh key. */
    public String next() {
        return prefix + issued++;
    }

    /** The {@code i}-th key this sequence issued. */
    public String issued(long i) {
        if (i < 0 || i >= issued) {
            throw new IndexOutOfBoundsException(i);
        }
        return prefix + i;
    }

    /** How many keys {@link #next()} issued. */
    public long issuedCount() {
        return issued;
    }

    /** The next index below {@code bound}, round robin. */
    public int nextIndex(int bound) {
        cursor = (cursor + 1) % bound;
        return cursor;
    }
}
