package dev.exactly.payments.charge;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.web.ApiResponse;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One row of {@code payments_charge}.
 *
 * @param id                the charge id ({@code ch_…})
 * @param tenant            the owning tenant
 * @param scopeKey          the scope of the request that created it (unique)
 * @param fingerprint       the fingerprint of that request
 * @param customer          the customer
 * @param amount            minor units
 * @param currency          lower-case ISO 4217 code
 * @param description       free text or {@code null}
 * @param metadata          the caller's metadata as JSON
 * @param status            the status
 * @param recoveryPoint     how far the phases got
 * @param downstreamKey     the processor's Idempotency-Key
 * @param processorRequest  the exact processor request (JSON)
 * @param processorChargeId the processor's id once known
 * @param failureCode       the decline code of a failed charge
 * @param ledgerEntryId     the journal entry of a succeeded charge
 * @param amountRefunded    minor units refunded so far
 * @param response          the recorded answer of a finished charge
 * @param attempts          failed processor attempts so far
 * @param lastError         the last attempt's failure
 * @param deadLetterReason  why recovery gave up
 * @param createdAt         creation time
 * @param updatedAt         last change
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
        @Nullable String processorChargeId,
        @Nullable String failureCode,
        @Nullable Long ledgerEntryId,
        long amountRefunded,
        @Nullable ApiResponse response,
        int attempts,
        @Nullable String lastError,
        @Nullable String deadLetterReason,
        Instant createdAt,
        Instant updatedAt) {

    /** The columns every query selects, in the order {@link #map} reads them. */
    static final String COLUMNS = """
            c.id, c.tenant, c.scope_key, c.fingerprint, c.customer, c.amount, c.currency, c.description,
            c.metadata, c.status, c.recovery_point, c.downstream_key, c.processor_request,
            c.processor_charge_id, c.failure_code, c.ledger_entry_id, c.amount_refunded, c.response_status,
            c.response_type, c.response_body, c.attempts, c.last_error, c.dead_letter_reason, c.created_at,
            c.updated_at\n""";

    /** The processor's Idempotency-Key for a charge: derived from the charge id, so every attempt repeats it. */
    public static String downstreamKeyOf(String chargeId) {
        return "exactly_" + chargeId;
    }

    /** The metadata as a map. */
    public Map<String, String> metadataMap() {
        @SuppressWarnings({"unchecked", "rawtypes"})
        Map<String, String> map = (Map) dev.exactly.payments.json.Json.readMap(metadata);
        return map;
    }

    static ChargeRow map(ResultSet rs) throws SQLException {
        Integer responseStatus = Jdbc.nullableInt(rs, "response_status");
        ApiResponse response = null;
        if (responseStatus != null) {
            int status = responseStatus;
            String id = rs.getString("id");
            response = new ApiResponse(status, rs.getString("response_type"),
                    status == 201 ? ChargeViews.location(id) : null, rs.getBytes("response_body"), false, true, null);
        }
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
                rs.getString("processor_charge_id"),
                rs.getString("failure_code"),
                Jdbc.nullableLong(rs, "ledger_entry_id"),
                rs.getLong("amount_refunded"),
                response,
                rs.getInt("attempts"),
                rs.getString("last_error"),
                rs.getString("dead_letter_reason"),
                Objects.requireNonNull(Jdbc.instant(rs, "created_at")),
                Objects.requireNonNull(Jdbc.instant(rs, "updated_at")));
    }
}
