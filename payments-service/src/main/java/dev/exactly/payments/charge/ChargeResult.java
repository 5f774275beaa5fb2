package dev.exactly.payments.charge;

import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.json.FieldError;
import java.time.Duration;
import java.util.List;

/**
 * How a charge request ended for its caller. Only {@link Finished} and {@link Replayed} are outcomes (the
 * recorded answer); everything else tells the client to fix the request, to come back later with the same
 * key, or that the charge waits for an operator.
 */
public sealed interface ChargeResult {

    /** The body broke its rules: nothing ran, nothing is recorded; the key stays usable. */
    record Invalid(List<FieldError> errors) implements ChargeResult {
        public Invalid {
            errors = List.copyOf(errors);
        }
    }

    /** This request finished the charge: its recorded answer (the charge, or its decline). */
    record Finished(StoredResponse answer) implements ChargeResult {}

    /** An earlier request with this key finished the charge: the answer it recorded. */
    record Replayed(StoredResponse answer) implements ChargeResult {}

    /** The key belongs to a request with another payload. */
    record KeyReused() implements ChargeResult {}

    /** Another owner is working on the charge; come back after {@code retryAfter}. */
    record InFlight(Duration retryAfter) implements ChargeResult {}

    /** Recovery gave up on the charge; an operator will settle it. */
    record DeadLettered(String chargeId) implements ChargeResult {}

    /**
     * The processor gave no answer; the charge is left to recovery, which asks the processor under the same
     * downstream key.
     *
     * @param outcomeUnknown whether the request may have reached the processor
     * @param retryAfter     when the next attempt is due
     */
    record ProcessorUnavailable(String chargeId, boolean outcomeUnknown, Duration retryAfter) implements ChargeResult {}

    /** The database failed after the processor was called ({@code when}); recovery will settle the charge. */
    record OutcomeUnknown(String chargeId, When when) implements ChargeResult {}

    /** This owner lost the charge to another owner, who finishes it. */
    record LeaseLost() implements ChargeResult {}

    /** When the database failed, for {@link OutcomeUnknown}. */
    enum When {
        /** Recording the processor's answer (phase 3). */
        FINISHING,
        /** Recording an attempt that got no answer. */
        RECORDING_ATTEMPT
    }
}
