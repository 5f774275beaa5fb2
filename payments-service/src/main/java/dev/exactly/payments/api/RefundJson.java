package dev.exactly.payments.api;

import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.charge.ChargeStatus;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.refund.Refund;
import dev.exactly.payments.refund.RefundAnswers;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * The answers refunds record: the refund as 201, refusals (the service's and the processor's) as problem
 * documents.
 */
@Component
public final class RefundJson implements RefundAnswers {

    @Override
    public StoredResponse refunded(Refund refund) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("id", refund.id());
        json.put("object", "refund");
        json.put("amount", refund.amount());
        json.put("currency", refund.currency());
        json.put("charge", refund.chargeId());
        json.put("status", "succeeded");
        json.put("created", refund.created().getEpochSecond());
        return ApiResponse.created("/v1/refunds/" + refund.id(), Json.write(json))
                .stored();
    }

    @Override
    public StoredResponse failed(String refundId, String chargeId, String failureCode) {
        return ApiProblems.refundFailed(refundId, chargeId, failureCode).stored();
    }

    @Override
    public StoredResponse chargeMissing() {
        return ApiProblems.notFound("charge").stored();
    }

    @Override
    public StoredResponse notRefundable(String chargeId, ChargeStatus status) {
        return ApiProblems.chargeNotRefundable(chargeId, status.db()).stored();
    }

    @Override
    public StoredResponse notAtProcessor(String chargeId) {
        return ApiProblems.chargeNotRefundableBecause(
                        chargeId,
                        "the charge was settled by an operator without the "
                                + "processor's charge, so the processor cannot refund it; refund it at the processor by hand")
                .stored();
    }

    @Override
    public StoredResponse exceedsCharge(String chargeId, long requested, long refundable) {
        return ApiProblems.refundExceedsCharge(chargeId, requested, refundable).stored();
    }
}
