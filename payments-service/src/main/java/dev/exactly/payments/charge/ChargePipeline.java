package dev.exactly.payments.charge;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.keys.DurableTier;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import dev.exactly.psp.PspChargeRequest;
import java.time.Instant;
import java.time.InstantSource;
import org.jspecify.annotations.Nullable;

/**
 * {@code POST /v1/charges} behind the hot tier: the durable tier's phase 1, then phases 2 and 3 by
 * {@link ChargeExecutor}.
 *
 * <p>Phase 1 is one transaction: claim the durable record (PostgreSQL, unique on the scope) and, for a
 * new key, insert the charge row ({@code pending}) with the downstream key and the exact processor
 * request, and set the recovery point {@code charge_created}. What the claim finds decides the rest:
 * <ul>
 *   <li>a finished record: its answer, byte for byte (422 if the payload differs);</li>
 *   <li>a record in flight: 409 with {@code Retry-After} (never a second execution);</li>
 *   <li>claimed, and a charge row exists for the scope (an earlier owner died, or the record expired
 *       while the row stayed): the row decides. Finished → its recorded answer; pending → resume it from
 *       its recovery point, asking the processor first; different fingerprint → 422;</li>
 *   <li>claimed, no row: a new charge.</li>
 * </ul>
 * {@link ChargeExecutor} keeps the record's lease alive while phases 2 and 3 run.
 */
public final class ChargePipeline {
    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final DurableTier durable;
    private final ChargeExecutor executor;
    private final Ids ids;
    private final InstantSource clock;
    private final ChargeObserver observer;

    /** @param observer told when a charge passes a step ({@link ChargeObserver#NONE} in the service) */
    public ChargePipeline(Jdbc jdbc, ChargeRepository charges, DurableTier durable, ChargeExecutor executor, Ids ids,
            InstantSource clock, ChargeObserver observer) {
        this.jdbc = jdbc;
        this.charges = charges;
        this.durable = durable;
        this.executor = executor;
        this.ids = ids;
        this.clock = clock;
        this.observer = observer;
    }

    /** What phase 1 decided. */
    private sealed interface Begin {
        /** An answer without running anything. */
        record Answer(ApiResponse response) implements Begin {}

        /** This request owns the charge. */
        record Run(ChargeRow charge, OwnerToken owner, boolean fresh) implements Begin {}
    }

    /**
     * Creates a charge, or answers as the first request with this key was answered.
     *
     * @throws dev.exactly.payments.web.ApiException 422 when the body is invalid (nothing is recorded)
     */
    public ApiResponse create(String tenant, IdempotencyKey key, byte[] body, @Nullable String contentType) {
        ChargeRequest request = ChargeRequest.parse(body);
        ScopeKey scope = DurableTier.scopeKey(tenant, DurableTier.CHARGES_ROUTE, key);
        Fingerprint fingerprint = durable.fingerprint(DurableTier.CHARGES_ROUTE, body, contentType);
        Begin begin = jdbc.inTransaction(c -> {
            ClaimOutcome outcome = durable.claim(c, scope, fingerprint);
            if (!(outcome instanceof ClaimOutcome.Claimed claimed)) {
                Jdbc.rollback(c);
                return new Begin.Answer(durable.answerExisting(outcome, fingerprint));
            }
            ChargeRow existing = charges.findByScope(c, scope).orElse(null);
            if (existing != null) {
                if (!existing.fingerprint().equals(fingerprint)) {
                    Jdbc.rollback(c);
                    return new Begin.Answer(ApiProblems.keyReused());
                }
                switch (existing.status()) {
                    case SUCCEEDED, FAILED -> {
                        Jdbc.rollback(c);
                        return new Begin.Answer(durable.replayRow(scope, ChargeExecutor.recorded(existing)));
                    }
                    case DEAD_LETTERED -> {
                        Jdbc.rollback(c);
                        return new Begin.Answer(ApiProblems.deadLettered(existing.id()));
                    }
                    case PENDING -> {
                        durable.recoveryPoint(c, scope, claimed.owner(), existing.recoveryPoint().db());
                        return new Begin.Run(existing, claimed.owner(), false);
                    }
                }
            }
            ChargeRow created = newCharge(tenant, scope, fingerprint, request);
            charges.insert(c, created);
            durable.recoveryPoint(c, scope, claimed.owner(), RecoveryPoint.CHARGE_CREATED.db());
            return new Begin.Run(created, claimed.owner(), true);
        });
        return switch (begin) {
            case Begin.Answer answer -> answer.response();
            case Begin.Run run -> {
                if (run.fresh()) {
                    observer.created(run.charge());
                }
                yield executor.execute(run.charge(), run.owner(), run.fresh());
            }
        };
    }

    private ChargeRow newCharge(String tenant, ScopeKey scope, Fingerprint fingerprint, ChargeRequest request) {
        String id = ids.charge();
        PspChargeRequest processorRequest = request.toProcessorRequest(tenant, id);
        Instant now = clock.instant();
        return new ChargeRow(id, tenant, scope, fingerprint, request.customer(), request.amount(),
                request.currencyCode(), request.description(),
                new String(Json.write(new java.util.TreeMap<>(request.metadata())), java.nio.charset.StandardCharsets.UTF_8),
                ChargeStatus.PENDING, RecoveryPoint.CHARGE_CREATED, ChargeRow.downstreamKeyOf(id),
                ChargeRequest.processorRequestJson(processorRequest), null, null, null, 0, null, 0, null, null,
                now, now);
    }
}
