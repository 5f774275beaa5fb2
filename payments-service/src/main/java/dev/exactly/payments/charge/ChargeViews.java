package dev.exactly.payments.charge;

import dev.exactly.payments.json.Json;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/** The JSON of charges, with a fixed member order. */
public final class ChargeViews {
    private ChargeViews() {}

    /** {@code /v1/charges/{id}}. */
    public static String location(String chargeId) {
        return "/v1/charges/" + chargeId;
    }

    /** The charge as the API shows it now. */
    public static Map<String, Object> charge(ChargeRow row) {
        return charge(row, row.status(), row.processorChargeId(), row.failureCode(), row.amountRefunded());
    }

    /** The charge with a given outcome (used to build the recorded answer inside the finishing transaction). */
    static Map<String, Object> charge(ChargeRow row, ChargeStatus status, @Nullable String processorChargeId,
            @Nullable String failureCode, long amountRefunded) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("id", row.id());
        json.put("object", "charge");
        json.put("amount", row.amount());
        json.put("amount_refunded", amountRefunded);
        json.put("currency", row.currency());
        json.put("customer", row.customer());
        json.put("description", row.description());
        json.put("metadata", new TreeMap<>(row.metadataMap()));
        json.put("status", status.db());
        json.put("failure_code", failureCode);
        json.put("processor_charge", processorChargeId);
        json.put("created", row.createdAt().getEpochSecond());
        return json;
    }

    public static byte[] chargeBytes(ChargeRow row) {
        return Json.write(charge(row));
    }

    /** A page of charges. */
    public static byte[] list(List<ChargeRow> rows, boolean hasMore, String url) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "list");
        json.put("url", url);
        json.put("has_more", hasMore);
        json.put("data", rows.stream().map(ChargeViews::charge).toList());
        return Json.write(json);
    }

    /** A charge as the operator sees it: the recovery bookkeeping included. */
    public static Map<String, Object> operatorView(ChargeRow row, java.time.@Nullable Instant leaseExpiresAt) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("charge", row.id());
        json.put("tenant", row.tenant());
        json.put("customer", row.customer());
        json.put("amount", row.amount());
        json.put("currency", row.currency());
        json.put("status", row.status().db());
        json.put("recovery_point", row.recoveryPoint().db());
        json.put("attempts", row.attempts());
        json.put("last_error", row.lastError());
        json.put("dead_letter_reason", row.deadLetterReason());
        json.put("downstream_key", row.downstreamKey());
        json.put("lease_expires", leaseExpiresAt == null ? null : leaseExpiresAt.toString());
        json.put("created", row.createdAt().toString());
        json.put("updated", row.updatedAt().toString());
        return json;
    }
}
