package dev.exactly.payments.reconciliation;

import dev.exactly.payments.db.Jdbc;
import dev.exactly.psp.Capture;
import dev.exactly.psp.PspClient;
import dev.exactly.psp.Refund;
import java.sql.Array;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Compares the processor's books with the service's for a time window, and lists every mismatch:
 *
 * <ul>
 *   <li><b>captures</b>: every capture the processor logged in the window, and every charge the ledger
 *       journaled in the window, matched by the processor's charge id (or, for a charge the service
 *       never finished, its downstream key). A capture with no journaled charge is
 *       {@code in_processor_not_ledger}; a journaled charge with no capture in the processor's log (at
 *       any time, so a capture just outside the window is no mismatch) is {@code in_ledger_not_processor};
 *       a pair whose amounts differ is {@code amount_differs}.</li>
 *   <li><b>refunds</b>, as totals per charge: for every charge with refund activity in the window on
 *       either side, the processor's refunds of it against the ledger's refund entries of it, over all
 *       time.</li>
 * </ul>
 * The ledger's amounts are its posted (not pending) debits of the charge's and the refunds' entries, so a
 * charge row that says more than its journal entry is caught too. Reads only: nothing is changed.
 */
public final class Reconciliation {
    /** The posted debits of the charge's journal entry: what the ledger says was captured. */
    private static final String JOURNALED = """
            (SELECT coalesce(sum(p.amount), 0) FROM ledger_posting p
             WHERE p.entry_id = c.ledger_entry_id AND p.side = 'debit' AND NOT p.pending)""";

    private static final String COLUMNS =
            "c.id, c.processor_charge_id, c.downstream_key, c.currency, " + JOURNALED + " AS journaled";
    private static final String JOURNALED_IN_WINDOW = "SELECT " + COLUMNS + """
             FROM payments_charge c
            WHERE c.ledger_entry_id IS NOT NULL AND c.finished_at >= ? AND c.finished_at < ?""";
    private static final String BY_PROCESSOR = "SELECT " + COLUMNS + """
             FROM payments_charge c
            WHERE c.processor_charge_id = ? OR c.downstream_key = ?
            ORDER BY c.processor_charge_id = ? DESC
            LIMIT 1""";
    private static final String REFUNDED_IN_WINDOW = """
            SELECT DISTINCT r.charge_id FROM payments_refund r
            WHERE r.status = 'succeeded' AND r.created_at >= ? AND r.created_at < ?""";
    private static final String REFUND_TOTALS = "SELECT " + COLUMNS + """
            , (SELECT coalesce(sum(p.amount), 0) FROM payments_refund r
               JOIN ledger_posting p ON p.entry_id = r.ledger_entry_id AND p.side = 'debit' AND NOT p.pending
               WHERE r.charge_id = c.id AND r.status = 'succeeded') AS refunded
             FROM payments_charge c
            WHERE c.id = ANY(?) OR c.processor_charge_id = ANY(?)""";

    private final Jdbc jdbc;
    private final PspClient psp;

    public Reconciliation(Jdbc jdbc, PspClient psp) {
        this.jdbc = jdbc;
        this.psp = psp;
    }

    /** A charge as the service's books have it. */
    private record Booked(
            String id, @Nullable String processorChargeId, String downstreamKey, String currency, long journaled) {
        static Booked of(ResultSet rs) throws SQLException {
            return new Booked(
                    rs.getString("id"),
                    rs.getString("processor_charge_id"),
                    rs.getString("downstream_key"),
                    rs.getString("currency"),
                    rs.getLong("journaled"));
        }
    }

    /**
     * Compares the window {@code [from, to)}.
     *
     * @throws dev.exactly.psp.PspException the processor could not be asked
     */
    public ReconciliationReport reconcile(Instant from, Instant to) {
        if (!from.isBefore(to)) {
            throw new IllegalArgumentException("from must be before to");
        }
        List<Mismatch> mismatches = new ArrayList<>();
        int captures = compareCaptures(from, to, mismatches);
        int refunds = compareRefunds(from, to, mismatches);
        mismatches.sort(Comparator.comparing(Mismatch::subject)
                .thenComparing(m -> Objects.requireNonNullElse(m.chargeId(), ""))
                .thenComparing(m -> Objects.requireNonNullElse(m.processorChargeId(), "")));
        return new ReconciliationReport(from, to, captures, refunds, mismatches);
    }

    private int compareCaptures(Instant from, Instant to, List<Mismatch> mismatches) {
        List<Capture> logged = psp.captures(from, to);
        List<Booked> journaled = jdbc.query(
                JOURNALED_IN_WINDOW,
                s -> {
                    s.setTimestamp(1, Jdbc.timestamp(from));
                    s.setTimestamp(2, Jdbc.timestamp(to));
                },
                Booked::of);
        Set<String> matched = new HashSet<>();
        for (Capture capture : logged) {
            Optional<Booked> booked = jdbc.queryOne(
                    BY_PROCESSOR,
                    s -> {
                        s.setString(1, capture.chargeId());
                        s.setString(2, capture.idempotencyKey());
                        s.setString(3, capture.chargeId());
                    },
                    Booked::of);
            booked.ifPresent(b -> matched.add(b.id()));
            String chargeId = booked.map(Booked::id).orElse(null);
            long ledger = booked.map(Booked::journaled).orElse(0L);
            if (ledger == 0) {
                mismatches.add(new Mismatch(
                        Mismatch.Kind.IN_PROCESSOR_NOT_LEDGER,
                        Mismatch.Subject.CAPTURE,
                        chargeId,
                        capture.chargeId(),
                        capture.currency(),
                        capture.amount(),
                        0,
                        chargeId == null
                                ? "the processor captured money under a key no charge of this service has"
                                : "the processor captured money for a charge the ledger has not journaled"));
            } else if (ledger != capture.amount()) {
                mismatches.add(new Mismatch(
                        Mismatch.Kind.AMOUNT_DIFFERS,
                        Mismatch.Subject.CAPTURE,
                        chargeId,
                        capture.chargeId(),
                        capture.currency(),
                        capture.amount(),
                        ledger,
                        "the processor captured " + capture.amount() + ", the ledger journaled " + ledger));
            }
        }
        List<Booked> unmatched = journaled.stream()
                .filter(b -> !matched.contains(b.id()) && b.journaled() > 0)
                .toList();
        if (!unmatched.isEmpty()) {
            // a capture just outside the window is no mismatch: the processor's whole log decides
            Map<String, Capture> everCaptured = new HashMap<>();
            for (Capture capture : psp.captures()) {
                everCaptured.putIfAbsent(capture.chargeId(), capture);
                everCaptured.putIfAbsent(capture.idempotencyKey(), capture);
            }
            for (Booked b : unmatched) {
                Capture capture = b.processorChargeId() != null && everCaptured.containsKey(b.processorChargeId())
                        ? everCaptured.get(b.processorChargeId())
                        : everCaptured.get(b.downstreamKey());
                if (capture == null) {
                    mismatches.add(new Mismatch(
                            Mismatch.Kind.IN_LEDGER_NOT_PROCESSOR,
                            Mismatch.Subject.CAPTURE,
                            b.id(),
                            b.processorChargeId(),
                            b.currency(),
                            0,
                            b.journaled(),
                            "the ledger journaled a charge the processor never captured"));
                } else if (capture.amount() != b.journaled()) {
                    mismatches.add(new Mismatch(
                            Mismatch.Kind.AMOUNT_DIFFERS,
                            Mismatch.Subject.CAPTURE,
                            b.id(),
                            capture.chargeId(),
                            b.currency(),
                            capture.amount(),
                            b.journaled(),
                            "the processor captured " + capture.amount() + ", the ledger journaled " + b.journaled()));
                }
            }
        }
        // each logged capture once, and each journaled charge no logged capture matched
        return logged.size()
                + (int) journaled.stream()
                        .filter(b -> !matched.contains(b.id()))
                        .count();
    }

    private int compareRefunds(Instant from, Instant to, List<Mismatch> mismatches) {
        List<Refund> everRefunded = psp.refunds();
        Map<String, Long> processorTotals = everRefunded.stream()
                .collect(Collectors.groupingBy(
                        Refund::chargeId, LinkedHashMap::new, Collectors.summingLong(Refund::amount)));
        Map<String, String> processorCurrency = new HashMap<>();
        everRefunded.forEach(r -> processorCurrency.putIfAbsent(r.chargeId(), r.currency()));
        Set<String> processorCharges = everRefunded.stream()
                .filter(r -> !r.refundedAt().isBefore(from) && r.refundedAt().isBefore(to))
                .map(Refund::chargeId)
                .collect(Collectors.toCollection(HashSet::new));
        List<String> ledgerCharges = jdbc.query(
                REFUNDED_IN_WINDOW,
                s -> {
                    s.setTimestamp(1, Jdbc.timestamp(from));
                    s.setTimestamp(2, Jdbc.timestamp(to));
                },
                rs -> rs.getString(1));
        if (processorCharges.isEmpty() && ledgerCharges.isEmpty()) {
            return 0;
        }
        record Totals(Booked charge, long refunded) {}
        List<Totals> booked = jdbc.inTransaction(c -> Jdbc.query(
                c,
                REFUND_TOTALS,
                s -> {
                    s.setArray(1, textArray(c, ledgerCharges));
                    s.setArray(2, textArray(c, processorCharges));
                },
                rs -> new Totals(Booked.of(rs), rs.getLong("refunded"))));
        Set<String> seenAtProcessor = new HashSet<>();
        for (Totals t : booked) {
            String processorId = t.charge().processorChargeId();
            long processor = processorId == null ? 0 : processorTotals.getOrDefault(processorId, 0L);
            if (processorId != null) {
                seenAtProcessor.add(processorId);
            }
            compare(mismatches, t.charge().id(), processorId, t.charge().currency(), processor, t.refunded());
        }
        for (String processorId : processorCharges) {
            if (!seenAtProcessor.contains(processorId)) {
                compare(
                        mismatches,
                        null,
                        processorId,
                        processorCurrency.getOrDefault(processorId, ""),
                        processorTotals.getOrDefault(processorId, 0L),
                        0);
            }
        }
        return booked.size()
                + (int) processorCharges.stream()
                        .filter(p -> !seenAtProcessor.contains(p))
                        .count();
    }

    private static void compare(
            List<Mismatch> mismatches,
            @Nullable String chargeId,
            @Nullable String processorId,
            String currency,
            long processor,
            long ledger) {
        if (processor == ledger) {
            return;
        }
        Mismatch.Kind kind = ledger == 0
                ? Mismatch.Kind.IN_PROCESSOR_NOT_LEDGER
                : processor == 0 ? Mismatch.Kind.IN_LEDGER_NOT_PROCESSOR : Mismatch.Kind.AMOUNT_DIFFERS;
        String detail = switch (kind) {
            case IN_PROCESSOR_NOT_LEDGER -> "the processor refunded " + processor + " the ledger does not show";
            case IN_LEDGER_NOT_PROCESSOR -> "the ledger refunded " + ledger + " the processor never returned";
            case AMOUNT_DIFFERS -> "the processor refunded " + processor + " in all, the ledger " + ledger;
        };
        mismatches.add(new Mismatch(
                kind, Mismatch.Subject.REFUNDS, chargeId, processorId, currency, processor, ledger, detail));
    }

    private static Array textArray(Connection c, java.util.Collection<String> values) throws SQLException {
        return c.createArrayOf("text", values.toArray(String[]::new));
    }
}
