package dev.exactly.payments.charge;

import dev.exactly.idempotency.RecordStatus;
import dev.exactly.psp.PspCharge;
import org.jspecify.annotations.Nullable;

/** The final state of a charge, as phase 3 records it. */
public sealed interface ChargeOutcome {

    /** The processor's id of the charge, when known. */
    @Nullable
    String processorChargeId();

    /** An operator's note, or {@code null}. */
    @Nullable
    String resolution();

    /**
     * The processor captured the money (or an operator settled the charge as succeeded): journaled.
     *
     * @param resolution an operator's note, or {@code null}
     */
    record Captured(
            @Nullable String processorChargeId, @Nullable String resolution) implements ChargeOutcome {}

    /**
     * The processor authorized the charge ({@code "capture": false}): it holds the amount; the ledger holds
     * it as pending until a capture or a void.
     */
    record Authorized(@Nullable String processorChargeId) implements ChargeOutcome {
        @Override
        public @Nullable String resolution() {
            return null;
        }
    }

    /** The processor declined the charge, with its decline code. */
    record Declined(@Nullable String processorChargeId, String declineCode) implements ChargeOutcome {
        @Override
        public @Nullable String resolution() {
            return null;
        }
    }

    /**
     * An operator settled the charge as failed.
     *
     * @param reason     the operator's reason, shown to the client
     * @param resolution the operator's note
     */
    record FailedByOperator(@Nullable String processorChargeId, String reason, String resolution)
            implements ChargeOutcome {}

    /** The code of a charge an operator settled as failed. */
    String OPERATOR_FAILURE_CODE = "processing_error";
    /** The decline code when the processor gives none. */
    String DEFAULT_DECLINE_CODE = "card_declined";
    /**
     * The decline code of an authorization that the processor no longer holds when it is first recorded
     * (found voided or expired by a lookup long after the request).
     */
    String AUTHORIZATION_LOST_CODE = "authorization_expired";

    /**
     * The outcome the processor's answer says: captured, authorized (a hold, not a failure), or declined. A
     * hold that the processor already released (expired before this charge was recorded) holds nothing:
     * declined as {@value #AUTHORIZATION_LOST_CODE}.
     */
    static ChargeOutcome of(PspCharge answer) {
        String code = answer.declineCode();
        return switch (answer.status()) {
            case CAPTURED -> new Captured(answer.id(), null);
            case AUTHORIZED -> new Authorized(answer.id());
            case VOIDED, EXPIRED -> new Declined(answer.id(), AUTHORIZATION_LOST_CODE);
            case DECLINED -> new Declined(answer.id(), code == null ? DEFAULT_DECLINE_CODE : code);
        };
    }

    /** The charge's status after this outcome. */
    default ChargeStatus status() {
        return switch (this) {
            case Captured c -> ChargeStatus.SUCCEEDED;
            case Authorized a -> ChargeStatus.AUTHORIZED;
            case Declined d -> ChargeStatus.FAILED;
            case FailedByOperator f -> ChargeStatus.FAILED;
        };
    }

    /** The durable record's status: a failed charge is a finished, replayed refusal. */
    default RecordStatus recordStatus() {
        return this instanceof Captured || this instanceof Authorized ? RecordStatus.COMPLETED : RecordStatus.FAILED;
    }

    /** The failure code stored on the row: the decline code, or {@value #OPERATOR_FAILURE_CODE}. */
    default @Nullable String failureCode() {
        return switch (this) {
            case Captured c -> null;
            case Authorized a -> null;
            case Declined d -> d.declineCode();
            case FailedByOperator f -> OPERATOR_FAILURE_CODE;
        };
    }

    /** The operator's reason of a failure, or {@code null}. */
    default @Nullable String failureReason() {
        return this instanceof FailedByOperator f ? f.reason() : null;
    }
}
