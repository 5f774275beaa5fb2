package dev.exactly.payments.refund;

import dev.exactly.payments.charge.ChargeRequest;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.json.JsonFields;
import dev.exactly.payments.json.Parsed;
import dev.exactly.psp.PspChargeRequest;
import dev.exactly.psp.PspRefundRequest;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A validated refund body: {@code {"charge":"ch_…","amount":500}}.
 *
 * @param charge the charge to refund
 * @param amount minor units, positive
 */
public record RefundRequest(String charge, long amount) {
    private static final List<String> MEMBERS = List.of("charge", "amount");

    /** Validates a body: the request, or one error per member that breaks its rule. */
    public static Parsed<RefundRequest> parse(byte[] body) {
        JsonFields f = JsonFields.of(body);
        f.onlyKnown(MEMBERS);
        String charge = f.requiredString("charge", ChargeRequest.ID, "a charge id");
        long amount = f.requiredLong("amount", 1, PspChargeRequest.MAX_AMOUNT);
        return f.result(() -> new RefundRequest(charge, amount));
    }

    /** The request for the processor: the processor's charge, naming our refund and charge in its metadata. */
    public PspRefundRequest toProcessorRequest(
            String tenant, String refundId, String processorChargeId, String chargeId, String currency) {
        return new PspRefundRequest(
                processorChargeId,
                amount,
                currency,
                null,
                Map.of("exactly_refund", refundId, "exactly_charge", chargeId, "exactly_tenant", tenant));
    }

    /** The JSON persisted as the exact processor request, before it is sent. */
    public static String processorRequestJson(PspRefundRequest request) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("charge", request.charge());
        json.put("amount", request.amount());
        json.put("currency", request.currency());
        json.put("reason", request.reason());
        json.put("metadata", new TreeMap<>(request.metadata()));
        return new String(Json.write(json), StandardCharsets.UTF_8);
    }

    /** Reads a persisted processor request back, to send it again unchanged. */
    public static PspRefundRequest processorRequest(String json) {
        Map<String, Object> m = Json.readMap(json);
        @SuppressWarnings("unchecked")
        Map<String, String> metadata = (Map<String, String>) m.get("metadata");
        Object reason = m.get("reason");
        return new PspRefundRequest(
                (String) ChargeRequest.persisted(m, "charge"),
                ((Number) ChargeRequest.persisted(m, "amount")).longValue(),
                (String) ChargeRequest.persisted(m, "currency"),
                reason == null ? null : reason.toString(),
                Objects.requireNonNull(metadata, "a persisted processor request's metadata"));
    }
}
