package dev.exactly.payments.charge;

import dev.exactly.payments.webhooks.EventType;
import dev.exactly.payments.webhooks.Outbox;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;

/**
 * The webhook events of a charge, recorded in the transaction that decides it: {@code charge.succeeded}
 * when it is captured, {@code charge.failed} when it is declined or an operator settles it as failed. The
 * event carries the charge as {@code GET /v1/charges/{id}} shows it after that transaction, so it commits,
 * or rolls back, with the charge's final state and its journal entry.
 */
public final class ChargeEvents {
    private final Outbox outbox;
    private final ChargeRepository charges;
    private final ChargeAnswers answers;

    public ChargeEvents(Outbox outbox, ChargeRepository charges, ChargeAnswers answers) {
        this.outbox = outbox;
        this.charges = charges;
        this.answers = answers;
    }

    /**
     * Records the event of a charge that {@code outcome} just finished, on the finishing transaction's
     * connection (after the charge row was written).
     *
     * @return the event's id
     */
    public String finished(Connection connection, String chargeId, ChargeOutcome outcome) {
        ChargeRow row = charges.find(connection, chargeId)
                .orElseThrow(() -> new IllegalStateException("charge " + chargeId + " vanished in its own transaction"));
        EventType type = switch (outcome) {
            case ChargeOutcome.Captured captured -> EventType.CHARGE_SUCCEEDED;
            case ChargeOutcome.Declined declined -> EventType.CHARGE_FAILED;
            case ChargeOutcome.FailedByOperator failed -> EventType.CHARGE_FAILED;
        };
        return outbox.record(connection, row.tenant(), type, row.id(),
                new String(answers.resource(row), StandardCharsets.UTF_8));
    }
}
