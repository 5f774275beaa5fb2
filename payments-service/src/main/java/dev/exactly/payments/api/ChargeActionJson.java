package dev.exactly.payments.api;

import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.charge.ChargeAction;
import dev.exactly.payments.charge.ChargeActionAnswers;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/** The answers captures and voids record: the charge after it (200), or a refusal as a problem document. */
@Component
public final class ChargeActionJson implements ChargeActionAnswers {

    @Override
    public StoredResponse resolved(ChargeRow charge) {
        return ApiResponse.json(200, Json.write(ChargeJson.charge(charge))).stored();
    }

    @Override
    public StoredResponse refused(
            ChargeRow charge,
            ChargeAction.Kind kind,
            Refusal refusal,
            @Nullable Long requested,
            @Nullable String processorCode) {
        String verb = kind.verb();
        ApiResponse answer = switch (refusal) {
            case ALREADY_CAPTURED -> ApiProblems.chargeAlreadyCaptured(charge.id(), verb);
            case VOIDED -> ApiProblems.chargeVoided(charge.id(), verb);
            case NOT_AUTHORIZED -> ApiProblems.chargeNotAuthorized(charge.id(), verb);
            case EXCEEDS_AUTHORIZATION ->
                ApiProblems.captureExceedsAuthorization(
                        charge.id(), requested == null ? charge.amount() : requested, charge.amount());
            case PROCESSOR_REFUSED ->
                ApiProblems.processorRefused(
                        charge.id(), verb, processorCode == null ? "processor_refused" : processorCode);
        };
        return answer.stored();
    }
}
