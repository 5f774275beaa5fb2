package dev.exactly.payments.charge;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.keys.DurableTier;
import dev.exactly.payments.web.ApiException;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import dev.exactly.psp.PspCharge;
import dev.exactly.psp.PspClient;
import dev.exactly.psp.PspException;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Reading charges, and the operator's actions on stuck and dead-lettered ones. An action owns the
 * durable record like any other finisher: it takes the record over with a claim (so it never races the
 * worker or a retry), then uses the same phases as everyone else.
 */
public final class ChargeOperations {
    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final DurableTier durable;
    private final ChargeExecutor executor;
    private final PspClient psp;
    private final InstantSource clock;

    public ChargeOperations(Jdbc jdbc, ChargeRepository charges, DurableTier durable, ChargeExecutor executor,
            PspClient psp, InstantSource clock) {
        this.jdbc = jdbc;
        this.charges = charges;
        this.durable = durable;
        this.executor = executor;
        this.psp = psp;
        this.clock = clock;
    }

    /** The tenant's charge. */
    public Optional<ChargeRow> find(String tenant, String id) {
        return jdbc.inTransaction(c -> charges.findForTenant(c, id, tenant));
    }

    /** A page of the customer's charges, newest first; one more than {@code limit} tells whether more follow. */
    public List<ChargeRow> byCustomer(String tenant, String customer, @Nullable String startingAfter, int limit) {
        return jdbc.inTransaction(c -> charges.byCustomer(c, tenant, customer, startingAfter, limit));
    }

    /** The currencies in which the customer has succeeded charges. */
    public List<String> customerCurrencies(String tenant, String customer) {
        return jdbc.inTransaction(c -> charges.customerCurrencies(c, tenant, customer));
    }

    /** The operator's listing: {@code stuck} (pending, recovery working on it) or {@code dead_lettered}. */
    public List<Map<String, Object>> list(String state, int limit) {
        List<ChargeRepository.WithLease> rows = jdbc.inTransaction(c -> switch (state) {
            case "stuck" -> charges.stuck(c, limit);
            case "dead_lettered" -> charges.deadLettered(c, limit);
            default -> throw new IllegalArgumentException(state);
        });
        return rows.stream().map(r -> ChargeViews.operatorView(r.charge(), r.leaseExpiresAt())).toList();
    }

    /**
     * Tries a stuck or dead-lettered charge again now: its attempts start over, and it is resumed (the
     * processor is asked about the downstream key first).
     *
     * @return the operator view of the charge afterwards, with the answer a client now gets
     */
    public byte[] retry(String chargeId) {
        ChargeRow row = open(chargeId);
        OwnerToken owner = jdbc.inTransaction(c -> {
            OwnerToken taken = takeOver(c, row);
            charges.reopen(c, row.id(), "retried by operator", clock.instant());
            return taken;
        });
        ChargeRow reopened = jdbc.inTransaction(c -> charges.find(c, chargeId)).orElseThrow();
        ApiResponse answer = executor.execute(reopened, owner, false);
        return actionResult(chargeId, "retry", answer);
    }

    /**
     * Settles a stuck or dead-lettered charge by hand. When the processor can be asked and its record
     * contradicts the outcome, the action is refused: the processor's word about money wins.
     */
    public byte[] resolve(String chargeId, boolean succeeded, String reason) {
        ChargeRow row = open(chargeId);
        Optional<PspCharge> atProcessor;
        try {
            atProcessor = psp.findByIdempotencyKey(row.downstreamKey());
        } catch (PspException unreachable) {
            atProcessor = Optional.empty(); // the operator's word is all there is
        }
        if (atProcessor.isPresent() && atProcessor.get().captured() != succeeded) {
            throw new ApiException(ApiProblems.operatorConflict("the processor reports the charge as "
                    + atProcessor.get().status().wireName() + "; resolve it as "
                    + (atProcessor.get().captured() ? "succeeded" : "failed") + " or retry it"));
        }
        OwnerToken owner = jdbc.inTransaction(c -> takeOver(c, row));
        String note = "resolved by operator: " + reason;
        String processorId = atProcessor.map(PspCharge::id).orElse(null);
        ChargeExecutor.Outcome outcome = succeeded
                ? ChargeExecutor.Outcome.captured(processorId).resolvedBy(note)
                : ChargeExecutor.Outcome.failed(processorId, "processing_error", reason, note);
        ApiResponse answer = executor.finish(row, owner, outcome);
        return actionResult(chargeId, "resolve", answer);
    }

    private ChargeRow open(String chargeId) {
        ChargeRow row = jdbc.inTransaction(c -> charges.find(c, chargeId))
                .orElseThrow(() -> new ApiException(ApiProblems.notFound("charge")));
        if (row.status().isFinished()) {
            throw new ApiException(ApiProblems.operatorConflict("the charge is already " + row.status().db()));
        }
        return row;
    }

    private OwnerToken takeOver(java.sql.Connection c, ChargeRow row) {
        ClaimOutcome outcome = durable.claim(c, row.scopeKey(), row.fingerprint());
        if (!(outcome instanceof ClaimOutcome.Claimed claimed)) {
            throw new ApiException(ApiProblems.operatorConflict(
                    "the charge is being processed right now; list it again in a moment"));
        }
        durable.recoveryPoint(c, row.scopeKey(), claimed.owner(), row.recoveryPoint().db());
        return claimed.owner();
    }

    private byte[] actionResult(String chargeId, String action, ApiResponse answer) {
        ChargeRow after = jdbc.inTransaction(c -> charges.find(c, chargeId)).orElseThrow();
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("action", action);
        json.put("answer_status", answer.status());
        json.put("request", ChargeViews.operatorView(after, null));
        return Json.write(json);
    }
}
