package dev.exactly.psp;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * Counters of one simulator run: totals over every {@link PspOperation}, and each operation's own.
 *
 * @param requests   every request to an operation ({@code POST} of a charge, capture, void or refund)
 * @param captures   captures made by requests (charges captured at once and holds captured; entries
 *                   planted by tests are not counted)
 * @param declines   charges declined (new declines only, not replays)
 * @param replays    answers replayed from an earlier request with the same key
 * @param rejected   4xx answers not recorded: missing or malformed key, invalid body, key reused with
 *                   another body
 * @param faults     faults that really fired, by kind, over all operations (every kind present)
 * @param operations each operation's counters (every operation present)
 */
public record PspStats(
        long requests,
        long captures,
        long declines,
        long replays,
        long rejected,
        Map<FaultKind, Long> faults,
        Map<PspOperation, OperationStats> operations) {

    private static final OperationStats NOTHING = new OperationStats(0, 0, 0, 0, 0, Map.of());

    public PspStats {
        faults = OperationStats.allKinds(faults);
        EnumMap<PspOperation, OperationStats> all = new EnumMap<>(PspOperation.class);
        for (PspOperation o : PspOperation.values()) {
            all.put(o, operations.getOrDefault(o, NOTHING));
        }
        operations = Collections.unmodifiableMap(all);
    }

    /** How many times faults of this kind fired, over all operations. */
    public long fired(FaultKind kind) {
        return Objects.requireNonNull(faults.get(kind), "every kind");
    }

    /** How many times faults of this kind fired on this operation. */
    public long fired(PspOperation operation, FaultKind kind) {
        return operation(operation).fired(kind);
    }

    /** The counters of one operation. */
    public OperationStats operation(PspOperation operation) {
        return Objects.requireNonNull(operations.get(operation), "every operation");
    }
}
