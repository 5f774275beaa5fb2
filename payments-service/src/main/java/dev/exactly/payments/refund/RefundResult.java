package dev.exactly.payments.refund;

import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.json.FieldError;
import java.time.Duration;
import java.util.List;

/**
 * How a refund request ended for its caller. {@link Finished} and {@link Replayed} carry a recorded answer
 * (the refund, or a refusal that is an outcome too: no such charge, not refundable, too much, or the
 * processor's refusal). {@link ProcessorUnavailable}, {@link OutcomeUnknown} and {@link DeadLettered} leave
 * a pending refund behind that a retry with the same key, or recovery, finishes.
 */
public sealed interface RefundResult {

    /** The body broke its rules: nothing ran, nothing is recorded; the key stays usable. */
    record Invalid(List<FieldError> errors) implements RefundResult {
        public Invalid {
            errors = List.copyOf(errors);
        }
    }

    /** This request decided the refund: its recorded answer. */
    record Finished(StoredResponse answer) implements RefundResult {}

    /** An earlier request with this key decided it: the answer it recorded. */
    record Replayed(StoredResponse answer) implements RefundResult {}

    /** The key belongs to a request with another payload. */
    record KeyReused() implements RefundResult {}

    /** Another request with this key is in flight; come back after {@code retryAfter}. */
    record InFlight(Duration retryAfter) implements RefundResult {}

    /** The charge is not settled yet: nothing is recorded, a retry later decides. */
    record ChargePending(String chargeId) implements RefundResult {}

    /** This request lost its record to another owner. */
    record LeaseLost() implements RefundResult {}

    /**
     * The processor gave no answer; the refund stays pending, its amount reserved, and recovery asks the
     * processor under the same downstream key (never a second refund).
     *
     * @param outcomeUnknown whether the request may have reached the processor
     * @param retryAfter     when the next attempt is due
     */
    record ProcessorUnavailable(String refundId, boolean outcomeUnknown, Duration retryAfter) implements RefundResult {}

    /** The database failed after the processor was called; recovery will settle the refund. */
    record OutcomeUnknown(String refundId) implements RefundResult {}

    /** Recovery got no answer from the processor after its attempts; the refund waits for an operator. */
    record DeadLettered(String refundId) implements RefundResult {}
}
