package dev.exactly.psp;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * Counters of one simulator run.
 *
 * @param requests every {@code POST /v1/charges} received
 * @param captures charges captured (equals the capture log's size)
 * @param declines charges declined (new declines only, not replays)
 * @param replays  answers replayed from an earlier request with the same key
 * @param rejected 4xx answers: missing or malformed key, invalid body, key reused with another body
 * @param faults   faults that really fired, by kind (every kind present, zero when it never fired)
 */
public record PspStats(long requests, long captures, long declines, long replays, long rejected, Map<FaultKind, Long> faults) {

    public PspStats {
        EnumMap<FaultKind, Long> all = new EnumMap<>(FaultKind.class);
        for (FaultKind k : FaultKind.values()) {
            all.put(k, faults.getOrDefault(k, 0L));
        }
        faults = Collections.unmodifiableMap(all);
    }

    /** How many times faults of this kind fired. */
    public long fired(FaultKind kind) {
        return faults.get(kind);
    }
}
