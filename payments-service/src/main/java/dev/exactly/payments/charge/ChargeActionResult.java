package dev.exactly.payments.charge;

import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.json.FieldError;
import java.time.Duration;
import java.util.List;

/**
 * How a capture or void request ended for its caller. {@link Finished} and {@link Replayed} carry the
 * recorded answer (the charge resolved, or a refusal, which is an outcome too); everything else tells the
 * client to fix the request or to come back later with the same key.
 */
public sealed interface ChargeActionResult {

    /** The body broke its rules: nothing ran, nothing is recorded; the key stays usable. */
    record Invalid(List<FieldError> errors) implements ChargeActionResult {
        public Invalid {
            errors = List.copyOf(errors);
        }
    }

    /** This request decided the action: its recorded answer. */
    record Finished(StoredResponse answer) implements ChargeActionResult {}

    /** An earlier request with this key decided it: the answer it recorded. */
    record Replayed(StoredResponse answer) implements ChargeActionResult {}

    /** The key belongs to a request with another payload (or another charge). */
    record KeyReused() implements ChargeActionResult {}

    /** Another request with this key is in flight; come back after {@code retryAfter}. */
    record InFlight(Duration retryAfter) implements ChargeActionResult {}

    /** The tenant has no such charge: nothing recorded. */
    record ChargeMissing() implements ChargeActionResult {}

    /** The charge's creation is not settled yet: nothing recorded, a retry later decides. */
    record ChargePending(String chargeId) implements ChargeActionResult {}

    /** Another capture or void of the charge is under way: nothing recorded, a retry later decides. */
    record ActionInProgress(String chargeId) implements ChargeActionResult {}

    /** Recovery gave up on this action after its attempts; an operator will settle it. */
    record DeadLettered(String chargeId) implements ChargeActionResult {}

    /**
     * The processor gave no answer; the action is left to recovery, which sends it again under the same
     * downstream key (never a second capture).
     */
    record ProcessorUnavailable(String chargeId, boolean outcomeUnknown, Duration retryAfter)
            implements ChargeActionResult {}

    /** The database failed after the processor was called; recovery will settle the action. */
    record OutcomeUnknown(String chargeId) implements ChargeActionResult {}

    /** This owner lost the action to another owner, who finishes it. */
    record LeaseLost() implements ChargeActionResult {}
}
