package dev.exactly.payments.api;

import dev.exactly.payments.charge.ChargeActionResult;
import dev.exactly.payments.charge.ChargeResult;
import dev.exactly.payments.refund.RefundResult;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;

/**
 * The HTTP answers of the business results: a recorded answer as its exact bytes (with the replay
 * markers when an earlier request recorded it), everything else as a problem document that the hot tier
 * does not record (a conflict, an unknown outcome, a refusal a retry may overcome).
 */
final class Answers {
    private Answers() {}

    static ApiResponse of(ChargeResult result) {
        return switch (result) {
            case ChargeResult.Finished finished -> ApiResponse.recorded(finished.answer(), false);
            case ChargeResult.Replayed replayed -> ApiResponse.recorded(replayed.answer(), true);
            case ChargeResult.Invalid invalid ->
                ApiProblems.validationFailed("the charge request is invalid", invalid.errors());
            case ChargeResult.KeyReused reused -> ApiProblems.keyReused();
            case ChargeResult.InFlight inFlight -> ApiProblems.keyInUse(inFlight.retryAfter());
            case ChargeResult.DeadLettered dead -> ApiProblems.deadLettered(dead.chargeId());
            case ChargeResult.ProcessorUnavailable unavailable ->
                ApiProblems.processorUnavailable(
                        unavailable.chargeId(), unavailable.outcomeUnknown(), unavailable.retryAfter());
            case ChargeResult.OutcomeUnknown unknown ->
                ApiProblems.outcomeUnknown(
                        switch (unknown.when()) {
                            case FINISHING ->
                                "the database failed after the processor was called; the charge will be completed "
                                        + "by recovery";
                            case RECORDING_ATTEMPT ->
                                "the processor gave no answer and the database failed recording the "
                                        + "attempt; the charge will be completed by recovery";
                        },
                        unknown.chargeId());
            case ChargeResult.LeaseLost lost -> ApiProblems.leaseLost();
        };
    }

    static ApiResponse of(ChargeActionResult result) {
        return switch (result) {
            case ChargeActionResult.Finished finished -> ApiResponse.recorded(finished.answer(), false);
            case ChargeActionResult.Replayed replayed -> ApiResponse.recorded(replayed.answer(), true);
            case ChargeActionResult.Invalid invalid ->
                ApiProblems.validationFailed("the request is invalid", invalid.errors());
            case ChargeActionResult.KeyReused reused -> ApiProblems.keyReused();
            case ChargeActionResult.InFlight inFlight -> ApiProblems.keyInUse(inFlight.retryAfter());
            case ChargeActionResult.ChargeMissing missing ->
                ApiProblems.notFound("charge").notRecordable();
            case ChargeActionResult.ChargePending pending -> ApiProblems.chargePending(pending.chargeId());
            case ChargeActionResult.ActionInProgress busy -> ApiProblems.chargeActionInProgress(busy.chargeId());
            case ChargeActionResult.DeadLettered dead -> ApiProblems.deadLettered(dead.chargeId());
            case ChargeActionResult.ProcessorUnavailable unavailable ->
                ApiProblems.processorUnavailable(
                        unavailable.chargeId(), unavailable.outcomeUnknown(), unavailable.retryAfter());
            case ChargeActionResult.OutcomeUnknown unknown ->
                ApiProblems.outcomeUnknown(
                        "the database failed after the processor was called; recovery will complete it",
                        unknown.chargeId());
            case ChargeActionResult.LeaseLost lost -> ApiProblems.leaseLost();
        };
    }

    static ApiResponse of(RefundResult result) {
        return switch (result) {
            case RefundResult.Finished finished -> ApiResponse.recorded(finished.answer(), false);
            case RefundResult.Replayed replayed -> ApiResponse.recorded(replayed.answer(), true);
            case RefundResult.Invalid invalid ->
                ApiProblems.validationFailed("the refund request is invalid", invalid.errors());
            case RefundResult.KeyReused reused -> ApiProblems.keyReused();
            case RefundResult.InFlight inFlight -> ApiProblems.keyInUse(inFlight.retryAfter());
            case RefundResult.ChargePending pending -> ApiProblems.chargePending(pending.chargeId());
            case RefundResult.LeaseLost lost -> ApiProblems.leaseLost();
            case RefundResult.ProcessorUnavailable unavailable ->
                ApiProblems.refundProcessorUnavailable(
                        unavailable.refundId(), unavailable.outcomeUnknown(), unavailable.retryAfter());
            case RefundResult.OutcomeUnknown unknown ->
                ApiProblems.outcomeUnknown(
                        "the database failed after the " + "processor was called; refund " + unknown.refundId()
                                + " will be completed by recovery",
                        null);
            case RefundResult.DeadLettered dead -> ApiProblems.refundDeadLettered(dead.refundId());
        };
    }
}
