package dev.exactly.payments.refund;

import dev.exactly.payments.charge.ChargeRequest;
import dev.exactly.payments.json.JsonFields;
import dev.exactly.payments.json.Parsed;
import dev.exactly.psp.PspChargeRequest;
import java.util.List;

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
}
