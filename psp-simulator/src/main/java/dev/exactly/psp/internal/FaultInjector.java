package dev.exactly.psp.internal;

import dev.exactly.psp.DeclineRule;
import dev.exactly.psp.Fault;
import dev.exactly.psp.FaultSettings;
import dev.exactly.psp.PspOperation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;

/**
 * Decides the faults of each request of an operation: the per-request faults, the operation's next
 * queued one-shot faults, and the run's random faults (one sequence for every operation), drawn from a {@link Random} seeded by the settings (all draws of one
 * request are taken together, so a sequential run is reproducible).
 */
public final class FaultInjector {

    /**
     * The faults one request will suffer.
     *
     * @param latency       total delay before processing (zero: none)
     * @param errorStatus   5xx to answer before anything is recorded, 0 for none
     * @param timeout       hang before anything is recorded, or null
     * @param timeoutAfter  hang after the operation is committed, or null
     * @param dropResponse  close the connection without a response after the commit
     * @param decline       forced decline code, or null
     * @param declineRules  the run's decline rules
     */
    public record Plan(
            Duration latency,
            int errorStatus,
            @Nullable Duration timeout,
            @Nullable Duration timeoutAfter,
            boolean dropResponse,
            @Nullable String decline,
            List<DeclineRule> declineRules) {}

    private record State(FaultSettings settings, Random random) {}

    private volatile State state;
    private final Map<PspOperation, ConcurrentLinkedQueue<List<Fault>>> next = new EnumMap<>(PspOperation.class);

    public FaultInjector(FaultSettings settings) {
        this.state = new State(settings, new Random(settings.seed()));
        for (PspOperation o : PspOperation.values()) {
            next.put(o, new ConcurrentLinkedQueue<>());
        }
    }

    public FaultSettings settings() {
        return state.settings();
    }

    /** Replaces the run's faults; the random sequence restarts from the new seed. */
    public void set(FaultSettings settings) {
        state = new State(settings, new Random(settings.seed()));
    }

    /** No run faults and no queued one-shots. */
    public void clear() {
        set(FaultSettings.none());
        clearPending();
    }

    private ConcurrentLinkedQueue<List<Fault>> queue(PspOperation operation) {
        return Objects.requireNonNull(next.get(operation), "every operation");
    }

    /** The next {@code count} requests of this operation also suffer these faults. */
    public void enqueue(PspOperation operation, int count, List<Fault> faults) {
        List<Fault> copy = List.copyOf(faults);
        for (int i = 0; i < count; i++) {
            queue(operation).add(copy);
        }
    }

    /** One-shot fault sets not yet consumed, over all operations. */
    public int pending() {
        return next.values().stream().mapToInt(ConcurrentLinkedQueue::size).sum();
    }

    /** One-shot fault sets of this operation not yet consumed. */
    public int pending(PspOperation operation) {
        return queue(operation).size();
    }

    /** Drops the queued one-shots. */
    public void clearPending() {
        next.values().forEach(ConcurrentLinkedQueue::clear);
    }

    /** Decides the faults of one request (consuming one of its operation's queued one-shot sets, if any). */
    public Plan plan(PspOperation operation, List<Fault> requestFaults) {
        List<Fault> faults = new ArrayList<>(requestFaults);
        List<Fault> oneShot = queue(operation).poll();
        if (oneShot != null) {
            faults.addAll(oneShot);
        }
        State st = state;
        FaultSettings s = st.settings();
        long jitterMs;
        boolean error;
        boolean timeout;
        boolean timeoutAfter;
        boolean drop;
        synchronized (st) {
            Random r = st.random();
            jitterMs = s.latencyJitter().isZero()
                    ? 0
                    : r.nextLong(s.latencyJitter().toMillis() + 1);
            error = draw(r, s.errorRate());
            timeout = draw(r, s.timeoutRate());
            timeoutAfter = draw(r, s.timeoutAfterCaptureRate());
            drop = draw(r, s.dropResponseRate());
        }
        Duration latency = s.latency().plusMillis(jitterMs);
        int errorStatus = error ? s.errorStatus() : 0;
        Duration timeoutHold = timeout ? s.timeoutHold() : null;
        Duration timeoutAfterHold = timeoutAfter ? s.timeoutHold() : null;
        String decline = null;
        for (Fault f : faults) {
            switch (f) {
                case Fault.Latency l -> latency = latency.plus(l.delay());
                case Fault.ServerError e -> errorStatus = errorStatus == 0 ? e.status() : errorStatus;
                case Fault.Timeout t when t.afterCapture() -> timeoutAfterHold = longer(timeoutAfterHold, t.hold());
                case Fault.Timeout t -> timeoutHold = longer(timeoutHold, t.hold());
                case Fault.DropResponse d -> drop = true;
                case Fault.Decline d -> decline = decline == null ? d.code() : decline;
            }
        }
        if (latency.compareTo(Fault.MAX_DELAY) > 0) {
            latency = Fault.MAX_DELAY;
        }
        return new Plan(latency, errorStatus, timeoutHold, timeoutAfterHold, drop, decline, s.declines());
    }

    private static boolean draw(Random r, double rate) {
        return rate > 0 && r.nextDouble() < rate;
    }

    private static Duration longer(@Nullable Duration a, Duration b) {
        return a == null || b.compareTo(a) > 0 ? b : a;
    }
}
