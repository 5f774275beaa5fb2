package dev.exactly.payments.charge;

import dev.exactly.payments.json.JsonFields;
import dev.exactly.payments.json.Parsed;
import dev.exactly.psp.PspChargeRequest;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A validated body of {@code POST /v1/charges/{id}/capture} ({@code {}} or empty: the whole authorization;
 * {@code {"amount": n}}: part of it, the rest released; {@code {"amount": null}} is refused, never taken for
 * the whole) or {@code POST /v1/charges/{id}/void} ({@code {}} or
 * empty).
 *
 * @param amount the amount to capture, or {@code null} for the whole authorization (always for a void)
 */
public record ChargeActionRequest(@Nullable Long amount) {

    /** Validates a body for {@code kind}: the request, or one error per member that breaks its rule. */
    public static Parsed<ChargeActionRequest> parse(ChargeAction.Kind kind, byte[] body) {
        if (body.length == 0) {
            return new Parsed.Valid<>(new ChargeActionRequest(null));
        }
        JsonFields f = JsonFields.of(body);
        f.onlyKnown(kind == ChargeAction.Kind.CAPTURE ? List.of("amount") : List.of());
        Long amount =
                kind == ChargeAction.Kind.CAPTURE ? f.optionalLong("amount", 1, PspChargeRequest.MAX_AMOUNT) : null;
        return f.result(() -> new ChargeActionRequest(amount));
    }
}
