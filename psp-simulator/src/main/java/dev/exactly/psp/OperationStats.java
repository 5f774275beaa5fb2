package dev.exactly.psp;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * Counters of one {@link PspOperation} in a simulator run.
 *
 * @param requests  requests received
 * @param succeeded new outcomes that went through (charges captured or authorized, holds captured or
 *                  voided, refunds succeeded)
 * @param refused   new outcomes refused and recorded (declined charges, refused captures and voids,
 *                  failed refunds)
 * @param replays   answers replayed from an earlier request with the same key
 * @param rejected  4xx answers not recorded: missing or malformed key, invalid body, key reused with
 *                  another body
 * @param faults    faults that really fired on this operation, by kind (every kind present)
 */
public record OperationStats(
        long requests, long succeeded, long refused, long replays, long rejected, Map<FaultKind, Long> faults) {

    public OperationStats {
        faults = allKinds(faults);
    }

    /** How many times faults of this kind fired on this operation. */
    public long fired(FaultKind kind) {
        return Objects.requireNonNull(faults.get(kind), "every kind");
    }

    static Map<FaultKind, Long> allKinds(Map<FaultKind, Long> faults) {
        EnumMap<FaultKind, Long> all = new EnumMap<>(FaultKind.class);
        for (FaultKind k : FaultKind.values()) {
            all.put(k, faults.getOrDefault(k, 0L));
        }
        return Collections.unmodifiableMap(all);
    }
}
