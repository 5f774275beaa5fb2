package dev.exactly.payments.refund;

import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.charge.ChargeStatus;

/**
 * Renders the answers a refund decision records: the exact responses its request and every retry with its
 * key are given. Called inside the refund's transaction, so that each answer commits with the decision;
 * implemented by the web layer.
 */
public interface RefundAnswers {

    /** The processor refunded and the refund was journaled. */
    StoredResponse refunded(Refund refund);

    /** The processor refused the refund ({@code failureCode}): nothing moved. */
    StoredResponse failed(String refundId, String chargeId, String failureCode);

    /** The tenant has no such charge. */
    StoredResponse chargeMissing();

    /** The charge did not succeed (it is {@code status}): nothing to refund. */
    StoredResponse notRefundable(String chargeId, ChargeStatus status);

    /**
     * The charge succeeded but the processor's charge is not known (an operator settled it while the
     * processor could not be asked): the processor cannot be asked to refund it.
     */
    StoredResponse notAtProcessor(String chargeId);

    /** The refunds would exceed the charge: {@code refundable} is left of it. */
    StoredResponse exceedsCharge(String chargeId, long requested, long refundable);
}
