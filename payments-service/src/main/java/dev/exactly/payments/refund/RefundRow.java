package dev.exactly.payments.refund;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One refund request that got past validation: pending while it goes through the processor, then
 * succeeded, failed (the processor refused) or refused (the service refused it before the processor was
 * asked); dead-lettered when recovery gave up asking.
 *
 * @param chargeId         the charge id as requested (a refusal may name no charge of this tenant)
 * @param currency         the charge's currency ({@code null} when there is no such charge)
 * @param failureCode      why it failed or was refused
 * @param ledgerEntryId    the refund's journal entry once succeeded
 * @param downstreamKey    the processor's Idempotency-Key ({@code exactly_<refund id>}); {@code null} for
 *                         refunds that never reach the processor and for rows written before refunds did
 * @param processorRequest the exact processor request (JSON), persisted before the first send
 * @param processorRefundId the processor's id of the refund, once it answered
 * @param recoveryPoint    how far it got
 * @param answer           the recorded answer once finished
 */
public record RefundRow(
        String id,
        String tenant,
        ScopeKey scopeKey,
        Fingerprint fingerprint,
        String chargeId,
        long amount,
        @Nullable String currency,
        RefundStatus status,
        @Nullable String failureCode,
        @Nullable Long ledgerEntryId,
        @Nullable String downstreamKey,
        @Nullable String processorRequest,
        @Nullable String processorRefundId,
        RefundPoint recoveryPoint,
        int attempts,
        @Nullable StoredResponse answer,
        Instant createdAt) {

    /** The processor's Idempotency-Key of a refund: derived from its id, so that it can be sent once only. */
    public static String downstreamKey(String refundId) {
        return "exactly_" + refundId;
    }

    /** A new pending refund, as phase 1 writes it. */
    public static RefundRow pending(
            String id,
            String tenant,
            ScopeKey scopeKey,
            Fingerprint fingerprint,
            String chargeId,
            long amount,
            String currency,
            String processorRequest,
            Instant now) {
        return new RefundRow(
                id,
                tenant,
                scopeKey,
                fingerprint,
                chargeId,
                amount,
                currency,
                RefundStatus.PENDING,
                null,
                null,
                downstreamKey(id),
                processorRequest,
                null,
                RefundPoint.REFUND_CREATED,
                0,
                null,
                now);
    }

    /** A refund the service refused without asking the processor, with its recorded answer. */
    public static RefundRow refused(
            String id,
            String tenant,
            ScopeKey scopeKey,
            Fingerprint fingerprint,
            String chargeId,
            long amount,
            @Nullable String currency,
            String failureCode,
            StoredResponse answer,
            Instant now) {
        return new RefundRow(
                id,
                tenant,
                scopeKey,
                fingerprint,
                chargeId,
                amount,
                currency,
                RefundStatus.REFUSED,
                failureCode,
                null,
                null,
                null,
                null,
                RefundPoint.FINISHED,
                0,
                answer,
                now);
    }
}
