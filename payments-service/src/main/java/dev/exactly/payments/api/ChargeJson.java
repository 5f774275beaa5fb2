package dev.exactly.payments.api;

import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.charge.ChargeAnswers;
import dev.exactly.payments.charge.ChargeOutcome;
import dev.exactly.payments.charge.ChargeRepository;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.payments.charge.ChargeStatus;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * Charges as the API shows them, with a fixed member order; and the answers a finished charge records
 * (the charge as 201, or its decline as a 402 problem document), rendered inside phase 3's transaction.
 */
@Component
public final class ChargeJson implements ChargeAnswers {

    /** {@code /v1/charges/{id}}. */
    static String location(String chargeId) {
        return "/v1/charges/" + chargeId;
    }

    @Override
    public StoredResponse finished(ChargeRow charge, ChargeOutcome outcome) {
        ApiResponse answer = switch (outcome) {
            case ChargeOutcome.Captured captured ->
                ApiResponse.created(
                        location(charge.id()),
                        Json.write(charge(charge, ChargeStatus.SUCCEEDED, captured.processorChargeId(), null, 0)));
            case ChargeOutcome.Authorized authorized ->
                ApiResponse.created(
                        location(charge.id()),
                        Json.write(charge(charge, ChargeStatus.AUTHORIZED, authorized.processorChargeId(), null, 0)));
            case ChargeOutcome.Declined declined -> ApiProblems.cardDeclined(charge.id(), declined.declineCode());
            case ChargeOutcome.FailedByOperator failed -> ApiProblems.chargeFailed(charge.id(), failed.reason());
        };
        return answer.stored();
    }

    @Override
    public byte[] resource(ChargeRow charge) {
        return Json.write(charge(charge));
    }

    /** The charge as the API shows it now. */
    static Map<String, Object> charge(ChargeRow row) {
        return charge(row, row.status(), row.processorChargeId(), row.failureCode(), row.amountRefunded());
    }

    private static Map<String, Object> charge(
            ChargeRow row,
            ChargeStatus status,
            @Nullable String processorChargeId,
            @Nullable String failureCode,
            long amountRefunded) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("id", row.id());
        json.put("object", "charge");
        json.put("amount", row.amount());
        json.put(
                "amount_captured",
                status == ChargeStatus.SUCCEEDED && row.status() != ChargeStatus.SUCCEEDED
                        ? row.amount()
                        : row.amountCaptured());
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

    /** A page of charges. */
    static byte[] list(List<ChargeRow> rows, boolean hasMore, String url) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "list");
        json.put("url", url);
        json.put("has_more", hasMore);
        json.put("data", rows.stream().map(ChargeJson::charge).toList());
        return Json.write(json);
    }

    /** A charge as the operator sees it: the recovery bookkeeping included. */
    static Map<String, Object> operatorView(ChargeRow row, @Nullable Instant leaseExpiresAt) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("charge", row.id());
        json.put("tenant", row.tenant());
        json.put("customer", row.customer());
        json.put("amount", row.amount());
        json.put("currency", row.currency());
        json.put("status", row.status().db());
        json.put("recovery_point", row.recoveryPoint().db());
        json.put("attempts", row.attempts().count());
        json.put("last_error", row.attempts().lastError());
        json.put("dead_letter_reason", row.attempts().deadLetterReason());
        json.put("downstream_key", row.downstreamKey());
        json.put("lease_expires", leaseExpiresAt == null ? null : leaseExpiresAt.toString());
        json.put("created", row.createdAt().toString());
        json.put("updated", row.updatedAt().toString());
        return json;
    }

    /** The operator's list of charges. */
    static List<Map<String, Object>> operatorViews(List<ChargeRepository.WithLease> rows) {
        return rows.stream()
                .map(r -> operatorView(r.charge(), r.leaseExpiresAt()))
                .toList();
    }
}
