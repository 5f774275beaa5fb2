package dev.exactly.payments.charge;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.keys.AnswerColumns;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One row of {@code payments_charge}. New rows come from {@link #pending}; everything else is read back
 * from the table.
 *
 * @param id               the charge id ({@code ch_…})
 * @param tenant           the owning tenant
 * @param scopeKey         the scope of the request that created it (unique)
 * @param fingerprint      the fingerprint of that request
 * @param customer         the customer
 * @param amount           minor units
 * @param currency         lower-case ISO 4217 code
 * @param description      free text or {@code null}
 * @param metadata         the caller's metadata as JSON
 * @param status           the status
 * @param recoveryPoint    how far the phases got
 * @param downstreamKey    the processor's Idempotency-Key
 * @param processorRequest the exact processor request (JSON)
 * @param settlement       what phase 3 recorded ({@link Settlement#NONE} before)
 * @param attempts         the processor attempts that got no answer ({@link Attempts#NONE} at first)
 * @param createdAt        creation time
 * @param updatedAt        last change
 */
public record ChargeRow(
        String id,
        String tenant,
        ScopeKey scopeKey,
        Fingerprint fingerprint,
        String customer,
        long amount,
        String currency,
        @Nullable String description,
        String metadata,
        ChargeStatus status,
        RecoveryPoint recoveryPoint,
        String downstreamKey,
        String processorRequest,
        Settlement settlement,
        Attempts attempts,
        Instant createdAt,
        Instant updatedAt) {

    /**
     * What phase 3 records on a charge, and refunds add to.
     *
     * @param processorChargeId the processor's id once known
     * @param failureCode       the decline code of a failed charge
     * @param ledgerEntryId     the journal entry of a succeeded charge
     * @param amountRefunded    minor units refunded so far
     * @param answer            the recorded answer of a finished charge
     * @param holdEntryId       the ledger's pending entry of an authorization
     * @param amountCaptured    what the capture of an authorization captured ({@code null}: everything, or
     *                          not captured)
     */
    public record Settlement(
            @Nullable String processorChargeId,
            @Nullable String failureCode,
            @Nullable Long ledgerEntryId,
            long amountRefunded,
            @Nullable StoredResponse answer,
            @Nullable Long holdEntryId,
            @Nullable Long amountCaptured) {
        /** Nothing settled yet. */
        public static final Settlement NONE = new Settlement(null, null, null, 0, null, null, null);
    }

    /**
     * The recovery bookkeeping of a charge.
     *
     * @param count            failed processor attempts so far
     * @param lastError        the last attempt's failure
     * @param deadLetterReason why recovery gave up
     */
    public record Attempts(
            int count, @Nullable String lastError, @Nullable String deadLetterReason) {
        /** No attempt failed yet. */
        public static final Attempts NONE = new Attempts(0, null, null);
    }

    /** The columns every query selects, in the order {@link #map} reads them. */
    static final String COLUMNS = """
            c.id, c.tenant, c.scope_key, c.fingerprint, c.customer, c.amount, c.currency, c.description,
            c.metadata, c.status, c.recovery_point, c.downstream_key, c.processor_request,
            c.processor_charge_id, c.failure_code, c.ledger_entry_id, c.amount_refunded, c.response_status,
            c.response_type, c.response_location, c.response_body, c.attempts, c.last_error, c.dead_letter_reason,
            c.created_at, c.updated_at, c.hold_entry_id, c.amount_captured\n""";

    /**
     * A new charge as phase 1 inserts it: pending at {@link RecoveryPoint#CHARGE_CREATED}, with the
     * downstream key derived from its id and the exact processor request, persisted before the first send.
     */
    public static ChargeRow pending(
            String id, String tenant, ScopeKey scopeKey, Fingerprint fingerprint, ChargeRequest request, Instant now) {
        return new ChargeRow(
                id,
                tenant,
                scopeKey,
                fingerprint,
                request.customer(),
                request.amount(),
                request.currencyCode(),
                request.description(),
                request.metadataJson(),
                ChargeStatus.PENDING,
                RecoveryPoint.CHARGE_CREATED,
                downstreamKeyOf(id),
                ChargeRequest.processorRequestJson(request.toProcessorRequest(tenant, id)),
                Settlement.NONE,
                Attempts.NONE,
                now,
                now);
    }

    /**
     * The charge as phase 3 leaves it when {@code outcome} finishes it ({@link ChargeRepository#finishing}
     * writes the same), without the ids of its journal entry and hold, which the API does not show.
     */
    public ChargeRow finished(ChargeOutcome outcome, StoredResponse answer, Instant now) {
        return new ChargeRow(
                id,
                tenant,
                scopeKey,
                fingerprint,
                customer,
                amount,
                currency,
                description,
                metadata,
                outcome.status(),
                RecoveryPoint.FINISHED,
                downstreamKey,
                processorRequest,
                new Settlement(
                        outcome.processorChargeId(),
                        outcome.failureCode(),
                        null,
                        settlement.amountRefunded(),
                        answer,
                        settlement.holdEntryId(),
                        settlement.amountCaptured()),
                attempts,
                createdAt,
                now);
    }

    /** The processor's Idempotency-Key for a charge: derived from the charge id, so every attempt repeats it. */
    public static String downstreamKeyOf(String chargeId) {
        return "exactly_" + chargeId;
    }

    /** The processor's id once known. */
    public @Nullable String processorChargeId() {
        return settlement.processorChargeId();
    }

    /** The decline code of a failed charge. */
    public @Nullable String failureCode() {
        return settlement.failureCode();
    }

    /** The journal entry of a succeeded charge. */
    public @Nullable Long ledgerEntryId() {
        return settlement.ledgerEntryId();
    }

    /** The ledger's pending entry of an authorization. */
    public @Nullable Long holdEntryId() {
        return settlement.holdEntryId();
    }

    /**
     * Minor units captured: the amount of a charge captured at once, what the capture of an authorization
     * captured, 0 for anything else.
     */
    public long amountCaptured() {
        if (status != ChargeStatus.SUCCEEDED) {
            return 0;
        }
        Long captured = settlement.amountCaptured();
        return captured == null ? amount : captured;
    }

    /** Whether the charge was created with {@code "capture": false}. */
    public boolean authorizeOnly() {
        return !ChargeRequest.processorRequest(processorRequest).capture();
    }

    /** Minor units refunded so far. */
    public long amountRefunded() {
        return settlement.amountRefunded();
    }

    /** The recorded answer of a finished charge. */
    public @Nullable StoredResponse answer() {
        return settlement.answer();
    }

    /** The metadata as a map. */
    public Map<String, String> metadataMap() {
        @SuppressWarnings({"unchecked", "rawtypes"})
        Map<String, String> map = (Map) Json.readMap(metadata);
        return map;
    }

    /** The row under the cursor of a query that selects {@link #COLUMNS}. */
    static ChargeRow map(ResultSet rs) throws SQLException {
        return new ChargeRow(
                rs.getString("id"),
                rs.getString("tenant"),
                new ScopeKey(rs.getString("scope_key")),
                Fingerprint.decode(rs.getString("fingerprint")),
                rs.getString("customer"),
                rs.getLong("amount"),
                rs.getString("currency"),
                rs.getString("description"),
                rs.getString("metadata"),
                ChargeStatus.fromDb(rs.getString("status")),
                RecoveryPoint.fromDb(rs.getString("recovery_point")),
                rs.getString("downstream_key"),
                rs.getString("processor_request"),
                new Settlement(
                        rs.getString("processor_charge_id"),
                        rs.getString("failure_code"),
                        Jdbc.nullableLong(rs, "ledger_entry_id"),
                        rs.getLong("amount_refunded"),
                        AnswerColumns.read(rs),
                        Jdbc.nullableLong(rs, "hold_entry_id"),
                        Jdbc.nullableLong(rs, "amount_captured")),
                new Attempts(rs.getInt("attempts"), rs.getString("last_error"), rs.getString("dead_letter_reason")),
                Objects.requireNonNull(Jdbc.instant(rs, "created_at")),
                Objects.requireNonNull(Jdbc.instant(rs, "updated_at")));
    }
}
