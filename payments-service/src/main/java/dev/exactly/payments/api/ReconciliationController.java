package dev.exactly.payments.api;

import dev.exactly.payments.json.Json;
import dev.exactly.payments.reconciliation.Mismatch;
import dev.exactly.payments.reconciliation.Reconciliation;
import dev.exactly.payments.reconciliation.ReconciliationReport;
import dev.exactly.payments.security.Caller;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import dev.exactly.psp.PspException;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /v1/operator/reconciliation?from=&to=}: the processor's captures and refunds compared with the
 * ledger and the charge rows, every mismatch listed. Operator key only. {@code to} defaults to now and
 * {@code from} to a day before {@code to}; a window is at most 31 days.
 */
@RestController
public class ReconciliationController {
    private static final Duration MAX_WINDOW = Duration.ofDays(31);
    private static final String INSTANT = "must be an ISO-8601 instant such as 2026-12-01T00:00:00Z";
    /** The instants a window may name: the processor's books and the database hold nothing outside them. */
    private static final Instant EARLIEST = Instant.parse("1970-01-01T00:00:00Z");

    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

    private final Reconciliation reconciliation;
    private final InstantSource clock;

    public ReconciliationController(Reconciliation reconciliation, InstantSource clock) {
        this.reconciliation = reconciliation;
        this.clock = clock;
    }

    @GetMapping("/v1/operator/reconciliation")
    public ResponseEntity<byte[]> reconcile(
            @RequestParam(required = false) @Nullable String from,
            @RequestParam(required = false) @Nullable String to,
            HttpServletRequest request) {
        Caller.of(request).requireOperator();
        String givenTo = Http.given(to, "to", INSTANT);
        Instant end = givenTo == null ? clock.instant() : instant(givenTo, "to");
        String givenFrom = Http.given(from, "from", INSTANT);
        Instant start = givenFrom == null ? end.minus(Duration.ofDays(1)) : instant(givenFrom, "from");
        if (!start.isBefore(end)) {
            throw Http.invalidParam("from", "must be before to");
        }
        if (Duration.between(start, end).compareTo(MAX_WINDOW) > 0) {
            throw Http.invalidParam("from", "must be at most 31 days before to");
        }
        ReconciliationReport report;
        try {
            report = reconciliation.reconcile(start, end);
        } catch (PspException unreachable) {
            return Http.entity(
                    ApiProblems.processorUnreachable("the processor's books could not be read; try again"), request);
        }
        return Http.entity(ApiResponse.json(200, Json.write(json(report))), request);
    }

    private static Instant instant(String value, String name) {
        Instant instant;
        try {
            instant = Instant.parse(value);
        } catch (DateTimeParseException e) {
            throw Http.invalidParam(name, INSTANT);
        }
        if (instant.isBefore(EARLIEST) || instant.isAfter(LATEST)) {
            throw Http.invalidParam(name, "must be between " + EARLIEST + " and " + LATEST);
        }
        return instant;
    }

    private static Map<String, Object> json(ReconciliationReport report) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "reconciliation");
        json.put("from", report.from().toString());
        json.put("to", report.to().toString());
        json.put("captures_compared", report.captures());
        json.put("refunds_compared", report.refunds());
        Map<String, Object> counts = new LinkedHashMap<>();
        report.countsByKind().forEach((kind, n) -> counts.put(kind.wireName(), n));
        json.put("mismatch_counts", counts);
        List<Map<String, Object>> mismatches = new ArrayList<>();
        for (Mismatch m : report.mismatches()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("kind", m.kind().wireName());
            one.put("subject", m.subject().wireName());
            one.put("charge", m.chargeId());
            one.put("processor_charge", m.processorChargeId());
            one.put("currency", m.currency());
            one.put("processor_amount", m.processorAmount());
            one.put("ledger_amount", m.ledgerAmount());
            one.put("detail", m.detail());
            mismatches.add(one);
        }
        json.put("mismatches", mismatches);
        return json;
    }
}
