package dev.exactly.payments.refund;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseStart;
import dev.exactly.payments.charge.ChargeRepository;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.payments.charge.Ids;
import dev.exactly.payments.charge.Storage;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.json.Parsed;
import dev.exactly.payments.keys.IdempotentRoutes;
import dev.exactly.payments.keys.ReplayCounter;
import java.sql.Connection;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Refunding part or all of a charge through the processor, in atomic phases like a charge: phase 1 here,
 * phases 2 and 3 by {@link RefundExecutor}.
 *
 * <p>Phase 1 is one transaction: begin the durable record ({@link AtomicPhases#begin}), lock the charge
 * row and decide under that lock, so that concurrent refunds of one charge are decided one at a time. A
 * refund that fits (the charge's refunded amount, plus what its open refunds reserve, plus this one, at
 * most the charge) is inserted {@code pending} with its downstream key ({@code exactly_<refund id>}) and
 * the exact processor request: from then on its amount is reserved on the charge, and the checkpoint
 * {@code refund_created} commits with it. Refusals decided here (unknown charge, not refundable, too much)
 * never reach the processor: the refused row and its answer commit with the finished record, and are
 * replayed. A refund of a charge still pending is not recorded. What beginning finds decides the rest, as
 * for a charge: a finished record's answer; a record in flight, come back later; owned with a refund row
 * for the scope (an earlier owner died), the row decides: finished, its answer; pending, resume it, asking
 * the processor first.
 */
public final class RefundService {
    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final RefundRepository refunds;
    private final AtomicPhases phases;
    private final IdempotentRoutes routes;
    private final ReplayCounter replays;
    private final RefundExecutor executor;
    private final RefundAnswers answers;
    private final Ids ids;
    private final InstantSource clock;
    private final RefundObserver observer;

    /**
     * @param answers  renders the answers of the refusals decided in phase 1
     * @param observer told when a refund passes a step ({@link RefundObserver#NONE} in the service)
     */
    public RefundService(
            Storage storage,
            RefundRepository refunds,
            IdempotentRoutes routes,
            RefundExecutor executor,
            RefundAnswers answers,
            Ids ids,
            RefundObserver observer) {
        this.jdbc = storage.jdbc();
        this.charges = storage.charges();
        this.refunds = refunds;
        this.phases = storage.phases();
        this.routes = routes;
        this.replays = storage.replays();
        this.executor = executor;
        this.answers = answers;
        this.ids = ids;
        this.clock = storage.clock();
        this.observer = observer;
    }

    /** What phase 1 decided. */
    private sealed interface Begin {
        /** A result without going to the processor. */
        record Answer(RefundResult result) implements Begin {}

        /** This request owns the pending refund. */
        record Run(RefundRow refund, Phase phase, boolean fresh) implements Begin {}
    }

    /** Refunds part or all of a charge, or answers as the first request with this key was answered. */
    public RefundResult create(String tenant, IdempotencyKey key, byte[] body, @Nullable String contentType) {
        RefundRequest request;
        switch (RefundRequest.parse(body)) {
            case Parsed.Invalid<RefundRequest> invalid -> {
                return new RefundResult.Invalid(invalid.errors());
            }
            case Parsed.Valid<RefundRequest> valid -> request = valid.value();
        }
        IdempotencyRequest idempotency = routes.request(IdempotentRoutes.REFUNDS, tenant, key, body, contentType);
        Begin begin = jdbc.inTransaction(c -> switch (phases.begin(c, idempotency)) {
            case PhaseStart.Owned owned -> own(c, owned.phase(), idempotency, tenant, request);
            case PhaseStart.Replay replay -> {
                replays.count(idempotency.key());
                yield answer(c, new RefundResult.Replayed(replay.response()));
            }
            case PhaseStart.InFlight inFlight -> answer(c, new RefundResult.InFlight(inFlight.retryAfter()));
            case PhaseStart.KeyReused reused -> answer(c, new RefundResult.KeyReused());
            case PhaseStart.DeadLettered dead ->
                answer(
                        c,
                        new RefundResult.DeadLettered(refunds.findByScope(c, idempotency.key())
                                .orElseThrow()
                                .id()));
        });
        return switch (begin) {
            case Begin.Answer answer -> answer.result();
            case Begin.Run run -> {
                if (run.fresh()) {
                    observer.created(run.refund());
                }
                yield executor.execute(run.refund(), run.phase(), run.fresh());
            }
        };
    }

    /** The request owns the key: resume the scope's refund, or decide a new one. */
    private Begin own(Connection c, Phase phase, IdempotencyRequest idempotency, String tenant, RefundRequest request) {
        Optional<RefundRow> found = refunds.findByScope(c, idempotency.key());
        if (found.isPresent()) {
            RefundRow existing = found.get();
            if (!existing.fingerprint().equals(idempotency.fingerprint())) {
                return answer(c, new RefundResult.KeyReused());
            }
            return switch (existing.status()) {
                case SUCCEEDED, FAILED, REFUSED -> answer(c, executor.replay(existing));
                case DEAD_LETTERED -> answer(c, new RefundResult.DeadLettered(existing.id()));
                case PENDING -> {
                    phases.checkpoint(c, phase, existing.recoveryPoint().checkpoint());
                    yield new Begin.Run(existing, phase, false);
                }
            };
        }
        String refundId = ids.refund();
        Instant now = clock.instant();
        Refusal refusal = new Refusal(refundId, tenant, idempotency, request.amount(), now);
        ChargeRow charge = charges.lockForTenant(c, request.charge(), tenant).orElse(null);
        if (charge == null) {
            return refuse(c, phase, refusal.row(request.charge(), null, "resource_missing", answers.chargeMissing()));
        }
        switch (charge.status()) {
            case PENDING, DEAD_LETTERED -> {
                return answer(c, new RefundResult.ChargePending(charge.id()));
            }
            case FAILED, AUTHORIZED, VOIDED -> {
                return refuse(
                        c,
                        phase,
                        refusal.row(
                                charge.id(),
                                charge.currency(),
                                "charge_not_refundable",
                                answers.notRefundable(charge.id(), charge.status())));
            }
            case SUCCEEDED -> {
                // decided below
            }
        }
        String processorCharge = charge.processorChargeId();
        if (processorCharge == null || charge.ledgerEntryId() == null) {
            // settled by an operator without the processor's charge: nothing the processor could refund
            return refuse(
                    c,
                    phase,
                    refusal.row(
                            charge.id(),
                            charge.currency(),
                            "charge_not_refundable",
                            answers.notAtProcessor(charge.id())));
        }
        long refundable = charge.amountCaptured() - charge.amountRefunded() - refunds.reserved(c, charge.id());
        if (request.amount() > refundable) {
            return refuse(
                    c,
                    phase,
                    refusal.row(
                            charge.id(),
                            charge.currency(),
                            "refund_exceeds_charge",
                            answers.exceedsCharge(charge.id(), request.amount(), Math.max(refundable, 0))));
        }
        String processorRequest = RefundRequest.processorRequestJson(
                request.toProcessorRequest(tenant, refundId, processorCharge, charge.id(), charge.currency()));
        RefundRow created = RefundRow.pending(
                refundId,
                tenant,
                idempotency.key(),
                idempotency.fingerprint(),
                charge.id(),
                request.amount(),
                charge.currency(),
                processorRequest,
                now);
        refunds.insert(c, created);
        phases.checkpoint(c, phase, RefundPoint.REFUND_CREATED.checkpoint());
        return new Begin.Run(created, phase, true);
    }

    /** What every refusal of one request shares: the refund's id, its tenant, key, amount and time. */
    private record Refusal(String refundId, String tenant, IdempotencyRequest idempotency, long amount, Instant now) {
        RefundRow row(String chargeId, @Nullable String currency, String code, StoredResponse answer) {
            return RefundRow.refused(
                    refundId,
                    tenant,
                    idempotency.key(),
                    idempotency.fingerprint(),
                    chargeId,
                    amount,
                    currency,
                    code,
                    answer,
                    now);
        }
    }

    /** A refusal decided in phase 1: the row and its answer commit with the finished record. */
    private Begin refuse(Connection c, Phase phase, RefundRow refused) {
        StoredResponse answer = refused.answer();
        if (answer == null) {
            throw new IllegalStateException("a refusal has its answer");
        }
        refunds.insert(c, refused);
        if (!phases.finish(c, phase, RecordStatus.FAILED, answer)) {
            return answer(c, new RefundResult.LeaseLost());
        }
        return new Begin.Answer(new RefundResult.Finished(answer));
    }

    /** Ends phase 1 without running anything: nothing it wrote is kept. */
    private static Begin answer(Connection c, RefundResult result) {
        Jdbc.rollback(c);
        return new Begin.Answer(result);
    }
}
