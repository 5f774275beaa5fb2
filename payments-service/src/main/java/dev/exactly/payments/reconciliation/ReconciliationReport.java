package dev.exactly.payments.reconciliation;

import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What one reconciliation run compared and found.
 *
 * @param from       the window's start (inclusive)
 * @param to         the window's end (exclusive)
 * @param captures   captures compared (the processor's and the ledger's, matched pairs counted once)
 * @param refunds    charges whose refund totals were compared
 * @param mismatches every disagreement, captures first
 */
public record ReconciliationReport(Instant from, Instant to, int captures, int refunds, List<Mismatch> mismatches) {
    public ReconciliationReport {
        mismatches = List.copyOf(mismatches);
    }

    /** How many mismatches of each kind (every kind present, zero included). */
    public Map<Mismatch.Kind, Integer> countsByKind() {
        Map<Mismatch.Kind, Integer> counts = new EnumMap<>(Mismatch.Kind.class);
        for (Mismatch.Kind kind : Mismatch.Kind.values()) {
            counts.put(kind, 0);
        }
        mismatches.forEach(m -> counts.merge(m.kind(), 1, Integer::sum));
        return counts;
    }
}
