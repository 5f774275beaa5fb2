package dev.exactly.psp.internal;

import dev.exactly.psp.FaultKind;
import dev.exactly.psp.OperationStats;
import dev.exactly.psp.PspOperation;
import dev.exactly.psp.PspStats;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/** The run's counters per operation, updated lock-free by request threads. */
public final class Counters {

    /** One operation's counters. */
    public static final class Of {
        public final LongAdder requests = new LongAdder();
        public final LongAdder succeeded = new LongAdder();
        public final LongAdder refused = new LongAdder();
        public final LongAdder replays = new LongAdder();
        public final LongAdder rejected = new LongAdder();
        private final Map<FaultKind, LongAdder> faults = new EnumMap<>(FaultKind.class);

        private Of() {
            for (FaultKind k : FaultKind.values()) {
                faults.put(k, new LongAdder());
            }
        }

        /** Counts a fault that really fired. */
        public void fired(FaultKind kind) {
            Objects.requireNonNull(faults.get(kind), "every kind").increment();
        }

        private OperationStats snapshot() {
            Map<FaultKind, Long> fired = new EnumMap<>(FaultKind.class);
            faults.forEach((k, n) -> fired.put(k, n.sum()));
            return new OperationStats(
                    requests.sum(), succeeded.sum(), refused.sum(), replays.sum(), rejected.sum(), fired);
        }

        private void reset() {
            requests.reset();
            succeeded.reset();
            refused.reset();
            replays.reset();
            rejected.reset();
            faults.values().forEach(LongAdder::reset);
        }
    }

    /** Captures made by requests (at once or of a hold). */
    public final LongAdder captures = new LongAdder();

    private final Map<PspOperation, Of> operations = new EnumMap<>(PspOperation.class);

    public Counters() {
        for (PspOperation o : PspOperation.values()) {
            operations.put(o, new Of());
        }
    }

    /** The counters of one operation. */
    public Of of(PspOperation operation) {
        return Objects.requireNonNull(operations.get(operation), "every operation");
    }

    public PspStats snapshot() {
        Map<PspOperation, OperationStats> ops = new EnumMap<>(PspOperation.class);
        long requests = 0;
        long replays = 0;
        long rejected = 0;
        Map<FaultKind, Long> faults = new EnumMap<>(FaultKind.class);
        for (Map.Entry<PspOperation, Of> e : operations.entrySet()) {
            OperationStats s = e.getValue().snapshot();
            ops.put(e.getKey(), s);
            requests += s.requests();
            replays += s.replays();
            rejected += s.rejected();
            s.faults().forEach((k, n) -> faults.merge(k, n, Long::sum));
        }
        return new PspStats(
                requests,
                captures.sum(),
                Objects.requireNonNull(ops.get(PspOperation.CHARGE), "every operation")
                        .refused(),
                replays,
                rejected,
                faults,
                ops);
    }

    public void reset() {
        captures.reset();
        operations.values().forEach(Of::reset);
    }
}
