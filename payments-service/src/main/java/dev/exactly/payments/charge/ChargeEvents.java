package dev.exactly.payments.charge;

import dev.exactly.payments.db.Pipeline;
import dev.exactly.payments.webhooks.EventType;
import dev.exactly.payments.webhooks.Outbox;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;

/**
 * The webhook events of a charge, recorded in the transaction that decides it: {@code charge.succeeded}
 * when it is captured or authorized, {@code charge.failed} when it is declined or an operator settles it as
 * failed; {@code charge.captured} and {@code charge.voided} when an authorization is resolved. The
 * event carries the charge as {@code GET /v1/charges/{id}} shows it after that transaction, so it commits,
 * or rolls back, with the charge's final state and its journal entry.
 */
public final class ChargeEvents {
    private final Outbox outbox;
    private final ChargeAnswers answers;

    public ChargeEvents(Outbox outbox, ChargeAnswers answers) {
        this.outbox = outbox;
        this.answers = answers;
    }

    /**
     * Records the event of a charge that {@code outcome} just finished, on the finishing transaction's
     * connection.
     *
     * @param row the charge as the finishing transaction wrote it ({@link ChargeRepository#finish} returns it)
     * @return the event's id
     */
    public String finished(Connection connection, ChargeRow row, ChargeOutcome outcome) {
        return record(connection, row, finishedType(outcome));
    }

    private static EventType finishedType(ChargeOutcome outcome) {
        return switch (outcome) {
            case ChargeOutcome.Captured captured -> EventType.CHARGE_SUCCEEDED;
            // as Stripe does: an authorization succeeded too (its status says authorized); charge.captured follows
            case ChargeOutcome.Authorized authorized -> EventType.CHARGE_SUCCEEDED;
            case ChargeOutcome.Declined declined -> EventType.CHARGE_FAILED;
            case ChargeOutcome.FailedByOperator failed -> EventType.CHARGE_FAILED;
        };
    }

    /**
     * Adds the event of a charge that {@code outcome} finishes to phase 3's {@code pipeline}.
     *
     * @param row the charge as the pipeline writes it ({@link ChargeRow#finished})
     * @return the event's id
     */
    public String finished(Pipeline pipeline, ChargeRow row, ChargeOutcome outcome) {
        return outbox.record(pipeline, row.tenant(), finishedType(outcome), row.id(), answers.resource(row));
    }

    /**
     * Records {@code charge.captured} or {@code charge.voided} of an authorization that a capture or void just
     * resolved, on its transaction's connection.
     *
     * @param row the charge as the resolving transaction left it
     * @return the event's id
     */
    public String resolved(Connection connection, ChargeRow row, EventType type) {
        if (type != EventType.CHARGE_CAPTURED && type != EventType.CHARGE_VOIDED) {
            throw new IllegalArgumentException("an authorization is resolved by a capture or a void, not " + type);
        }
        return record(connection, row, type);
    }

    private String record(Connection connection, ChargeRow row, EventType type) {
        return outbox.record(
                connection, row.tenant(), type, row.id(), new String(answers.resource(row), StandardCharsets.UTF_8));
    }
}
