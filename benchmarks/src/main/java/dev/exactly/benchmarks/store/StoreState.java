package dev.exactly.benchmarks.store;

import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.TearDown;

/** What both store benchmarks hold: one open {@link StoreFixture}, closed at the end of the trial. */
public abstract class StoreState {
    private @Nullable StoreFixture fixture;

    /** Opens the fixture of the store named {@code store}, with one connection per thread. */
    protected final StoreFixture openFixture(String store, int threads) {
        close();
        StoreFixture opened = StoreFixture.open(StoreKind.of(store), threads);
        fixture = opened;
        return opened;
    }

    @TearDown(Level.Trial)
    public void close() {
        StoreFixture opened = fixture;
        fixture = null;
        if (opened != null) {
            opened.close();
        }
    }
}
