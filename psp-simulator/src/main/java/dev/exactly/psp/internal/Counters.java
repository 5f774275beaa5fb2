package dev.exactly.psp.internal;

import dev.exactly.psp.FaultKind;
import dev.exactly.psp.PspStats;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** The run's counters, updated lock-free by request threads. */
public final class Counters {

    public final LongAdder requests = new LongAdder();
    public final LongAdder captures = new LongAdder();
    public final LongAdder declines = new LongAdder();
    public final LongAdder replays = new LongAdder();
    public final LongAdder rejected = new LongAdder();
    private final Map<FaultKind, LongAdder> faults = new EnumMap<>(FaultKind.class);

    public Counters() {
        for (FaultKind k : FaultKind.values()) {
            faults.put(k, new LongAdder());
        }
    }

    /** Counts a fault that really fired. */
    public void fired(FaultKind kind) {
        faults.get(kind).increment();
    }

    public PspStats snapshot() {
        Map<FaultKind, Long> fired = new EnumMap<>(FaultKind.class);
        faults.forEach((k, n) -> fired.put(k, n.sum()));
        return new PspStats(requests.sum(), captures.sum(), declines.sum(), replays.sum(), rejected.sum(), fired);
    }

    public void reset() {
        requests.reset();
        captures.reset();
        declines.reset();
        replays.reset();
        rejected.reset();
        faults.values().forEach(LongAdder::reset);
    }
}
