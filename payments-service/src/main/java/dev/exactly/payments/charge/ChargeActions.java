package dev.exactly.payments.charge;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Checkpoint;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseStart;
import dev.exactly.idempotency.postgres.Retry;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.Ledger;
import dev.exactly.ledger.LedgerRetryableException;
import dev.exactly.ledger.LedgerStorageException;
import dev.exactly.ledger.Money;
import dev.exactly.payments.db.DatabaseException;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.json.Parsed;
import dev.exactly.payments.keys.IdempotentRoutes;
import dev.exactly.payments.keys.ReplayCounter;
import dev.exactly.payments.webhooks.EventType;
import dev.exactly.psp.PspCharge;
import dev.exactly.psp.PspClient;
import dev.exactly.psp.PspException;
import dev.exactly.psp.PspRequestException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Capturing or voiding an authorized charge, in atomic phases like a charge:
 * <ol>
 *   <li>one transaction: begin the durable record of the request's key ({@link AtomicPhases#begin}), lock
 *       the charge row, decide. A charge that cannot be captured or voided (captured, voided, failed, a
 *       capture above the authorization) is a refusal, recorded and replayed. An authorized charge gets a
 *       pending action row and the checkpoint {@code action_created}. At most one action per charge is
 *       pending or succeeded (a unique index), so a capture racing a void, or two captures with different
 *       keys, never both run: the later one waits ({@code charge-action-in-progress}, not recorded) and
 *       then gets the refusal.</li>
 *   <li>the processor's capture or void, under a key derived from the charge and the operation, the
 *       record's lease kept alive. No answer: the attempt is counted ({@link AtomicPhases#retryLater}) and
 *       recovery sends the same request again under the same key, which the processor answers as it
 *       answered the first: never a second capture.</li>
 *   <li>one transaction, fenced by the owner token: the ledger's capture (the captured amount posted, the
 *       rest released) or void of the charge's hold, the charge resolved ({@code succeeded} with
 *       {@code amount_captured}, or {@code voided}), the action finished with its answer, the event
 *       {@code charge.captured} or {@code charge.voided} in the outbox, and the record finished.</li>
 * </ol>
 * The expiry of authorizations ({@link #expireOne}) is a void like any other, under a key of its own.
 */
public final class ChargeActions implements PhaseKind {
    private static final Logger log = LoggerFactory.getLogger(ChargeActions.class);
    private static final Duration MIN_RETRY_AFTER = Duration.ofSeconds(1);
    private static final Checkpoint PROCESSOR_CALLED = Checkpoint.of("processor_called");
    private static final byte[] EMPTY_OBJECT = "{}".getBytes(StandardCharsets.UTF_8);

    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final ChargeActionRepository actions;
    private final AtomicPhases phases;
    private final IdempotentRoutes routes;
    private final ReplayCounter replays;
    private final PspClient psp;
    private final Ledger ledger;
    private final ChargeActionAnswers answers;
    private final ChargeEvents events;
    private final Ids ids;
    private final InstantSource clock;

    public ChargeActions(
            Storage storage,
            ChargeActionRepository actions,
            IdempotentRoutes routes,
            PspClient psp,
            Ledger ledger,
            ChargeActionAnswers answers,
            ChargeEvents events,
            Ids ids) {
        this.jdbc = storage.jdbc();
        this.charges = storage.charges();
        this.actions = actions;
        this.phases = storage.phases();
        this.routes = routes;
        this.replays = storage.replays();
        this.psp = psp;
        this.ledger = ledger;
        this.answers = answers;
        this.events = events;
        this.ids = ids;
        this.clock = storage.clock();
    }

    /** What phase 1 decided. */
    private sealed interface Begin {
        /** A result without running anything further. */
        record Answer(ChargeActionResult result) implements Begin {}

        /** This request owns the pending action. */
        record Run(ChargeAction action, Phase phase) implements Begin {}
    }

    /** Thrown inside a transaction when a fenced write finds that the owner lost the record: roll back. */
    private static final class LostRecord extends RuntimeException {
        LostRecord() {
            super(null, null, false, false);
        }
    }

    /** What the processor said, for phase 3. */
    private sealed interface Outcome {
        /** Captured this much. */
        record Captured(long amount) implements Outcome {}

        /** The hold is released (voided, or expired at the processor). */
        record Voided() implements Outcome {}

        /** The processor refused; the charge stays as it is. */
        record Refused(
                ChargeActionAnswers.Refusal refusal,
                @Nullable String code) implements Outcome {}
    }

    /**
     * Captures an authorized charge ({@code POST /v1/charges/{id}/capture}), or answers as the first request
     * with this key was answered.
     */
    public ChargeActionResult capture(
            String tenant, String chargeId, IdempotencyKey key, byte[] body, @Nullable String contentType) {
        return request(ChargeAction.Kind.CAPTURE, tenant, chargeId, key, body, contentType);
    }

    /** Voids an authorized charge ({@code POST /v1/charges/{id}/void}). */
    public ChargeActionResult voidCharge(
            String tenant, String chargeId, IdempotencyKey key, byte[] body, @Nullable String contentType) {
        return request(ChargeAction.Kind.VOID, tenant, chargeId, key, body, contentType);
    }

    private ChargeActionResult request(
            ChargeAction.Kind kind,
            String tenant,
            String chargeId,
            IdempotencyKey key,
            byte[] body,
            @Nullable String contentType) {
        ChargeActionRequest request;
        switch (ChargeActionRequest.parse(kind, body)) {
            case Parsed.Invalid<ChargeActionRequest> invalid -> {
                return new ChargeActionResult.Invalid(invalid.errors());
            }
            case Parsed.Valid<ChargeActionRequest> valid -> request = valid.value();
        }
        if (!ChargeRequest.ID.matcher(chargeId).matches()) {
            return new ChargeActionResult.ChargeMissing();
        }
        IdempotencyRequest idempotency =
                routes.request(route(kind), path(kind, chargeId), tenant, key, body, contentType);
        return run(begin(idempotency, tenant, chargeId, kind, ChargeAction.Origin.API, request.amount()));
    }

    private static String route(ChargeAction.Kind kind) {
        return kind == ChargeAction.Kind.CAPTURE ? IdempotentRoutes.CAPTURE : IdempotentRoutes.VOID;
    }

    private static String path(ChargeAction.Kind kind, String chargeId) {
        return "/v1/charges/" + chargeId + "/" + kind.db();
    }

    private ChargeActionResult run(Begin begin) {
        return switch (begin) {
            case Begin.Answer answer -> answer.result();
            case Begin.Run run -> execute(run.action(), run.phase());
        };
    }

    /** Phase 1 in a transaction of its own. */
    private Begin begin(
            IdempotencyRequest idempotency,
            String tenant,
            String chargeId,
            ChargeAction.Kind kind,
            ChargeAction.Origin origin,
            @Nullable Long amount) {
        return jdbc.inTransaction(c -> begin(c, idempotency, tenant, chargeId, kind, origin, amount));
    }

    private Begin begin(
            Connection c,
            IdempotencyRequest idempotency,
            String tenant,
            String chargeId,
            ChargeAction.Kind kind,
            ChargeAction.Origin origin,
            @Nullable Long amount) {
        return switch (phases.begin(c, idempotency)) {
            case PhaseStart.Owned owned -> own(c, owned.phase(), idempotency, tenant, chargeId, kind, origin, amount);
            case PhaseStart.Replay replay -> {
                replays.count(idempotency.key());
                yield answer(c, new ChargeActionResult.Replayed(replay.response()));
            }
            case PhaseStart.InFlight inFlight -> answer(c, new ChargeActionResult.InFlight(inFlight.retryAfter()));
            case PhaseStart.KeyReused reused -> answer(c, new ChargeActionResult.KeyReused());
            case PhaseStart.DeadLettered dead -> answer(c, new ChargeActionResult.DeadLettered(chargeId));
        };
    }

    private Begin own(
            Connection c,
            Phase phase,
            IdempotencyRequest idempotency,
            String tenant,
            String chargeId,
            ChargeAction.Kind kind,
            ChargeAction.Origin origin,
            @Nullable Long amount) {
        Optional<ChargeAction> found = actions.findByScope(c, idempotency.key());
        if (found.isPresent()) {
            ChargeAction existing = found.get();
            if (!existing.fingerprint().equals(idempotency.fingerprint())) {
                return answer(c, new ChargeActionResult.KeyReused());
            }
            if (existing.status() != ChargeAction.Status.PENDING) {
                replays.count(idempotency.key());
                return answer(c, new ChargeActionResult.Replayed(Objects.requireNonNull(existing.answer())));
            }
            phases.checkpoint(c, phase, ChargeAction.CREATED);
            return new Begin.Run(existing, phase);
        }
        Optional<ChargeRow> locked = charges.lockForTenant(c, chargeId, tenant);
        if (locked.isEmpty()) {
            return answer(c, new ChargeActionResult.ChargeMissing());
        }
        ChargeRow charge = locked.get();
        ChargeActionAnswers.Refusal refusal = switch (charge.status()) {
            case PENDING, DEAD_LETTERED -> null;
            case SUCCEEDED -> ChargeActionAnswers.Refusal.ALREADY_CAPTURED;
            case VOIDED -> ChargeActionAnswers.Refusal.VOIDED;
            case FAILED -> ChargeActionAnswers.Refusal.NOT_AUTHORIZED;
            case AUTHORIZED ->
                kind == ChargeAction.Kind.CAPTURE && amount != null && amount > charge.amount()
                        ? ChargeActionAnswers.Refusal.EXCEEDS_AUTHORIZATION
                        : null;
        };
        if (charge.status() == ChargeStatus.PENDING || charge.status() == ChargeStatus.DEAD_LETTERED) {
            return answer(c, new ChargeActionResult.ChargePending(charge.id()));
        }
        String downstreamKey = ChargeAction.downstreamKeyOf(charge.id(), kind);
        Instant now = clock.instant();
        if (refusal != null) {
            StoredResponse answer = answers.refused(charge, kind, refusal, amount, null);
            actions.insert(
                    c,
                    new ChargeAction(
                            ids.action(),
                            tenant,
                            idempotency.key(),
                            idempotency.fingerprint(),
                            charge.id(),
                            kind,
                            origin,
                            amount,
                            ChargeAction.Status.REFUSED,
                            downstreamKey,
                            answer),
                    code(refusal, null),
                    now);
            if (!phases.finish(c, phase, RecordStatus.FAILED, answer)) {
                return answer(c, new ChargeActionResult.LeaseLost());
            }
            return new Begin.Answer(new ChargeActionResult.Finished(answer));
        }
        if (actions.active(c, charge.id()).isPresent()) {
            return answer(c, new ChargeActionResult.ActionInProgress(charge.id()));
        }
        ChargeAction created = new ChargeAction(
                ids.action(),
                tenant,
                idempotency.key(),
                idempotency.fingerprint(),
                charge.id(),
                kind,
                origin,
                amount,
                ChargeAction.Status.PENDING,
                downstreamKey,
                null);
        actions.insert(c, created, null, now);
        phases.checkpoint(c, phase, ChargeAction.CREATED);
        return new Begin.Run(created, phase);
    }

    private static String code(ChargeActionAnswers.Refusal refusal, @Nullable String processorCode) {
        return switch (refusal) {
            case ALREADY_CAPTURED -> "charge_already_captured";
            case VOIDED -> "charge_voided";
            case NOT_AUTHORIZED -> "charge_not_authorized";
            case EXCEEDS_AUTHORIZATION -> "amount_too_large";
            case PROCESSOR_REFUSED -> processorCode == null ? "processor_refused" : processorCode;
        };
    }

    /** Ends phase 1 without running anything: nothing it wrote is kept. */
    private static Begin answer(Connection c, ChargeActionResult result) {
        Jdbc.rollback(c);
        return new Begin.Answer(result);
    }

    /** Phases 2 and 3 of an owned, pending action (a new one, a retry's, or recovery's). */
    ChargeActionResult execute(ChargeAction action, Phase phase) {
        ChargeRow charge =
                jdbc.inTransaction(c -> charges.find(c, action.chargeId())).orElseThrow();
        String processorCharge = Objects.requireNonNull(
                charge.processorChargeId(), () -> "authorized charge " + charge.id() + " has no processor charge");
        try (LeaseKeeper alive = phases.keepAlive(phase)) {
            Outcome outcome;
            try {
                outcome = switch (action.kind()) {
                    case CAPTURE ->
                        captured(psp.capture(
                                processorCharge,
                                action.amount() == null ? OptionalLong.empty() : OptionalLong.of(action.amount()),
                                action.downstreamKey(),
                                List.of()));
                    case VOID -> voided(psp.voidAuthorization(processorCharge, action.downstreamKey()));
                };
            } catch (PspRequestException refused) {
                if (!refused.refused()) {
                    alive.close();
                    return recordFailure(action, phase, refused);
                }
                outcome = new Outcome.Refused(ChargeActionAnswers.Refusal.PROCESSOR_REFUSED, refused.code());
            } catch (PspException e) {
                alive.close();
                return recordFailure(action, phase, e);
            }
            return finish(action, phase, outcome);
        }
    }

    private static Outcome captured(PspCharge answer) {
        return answer.captured()
                ? new Outcome.Captured(answer.amountCaptured())
                : new Outcome.Refused(
                        ChargeActionAnswers.Refusal.PROCESSOR_REFUSED,
                        "charge_" + answer.status().wireName());
    }

    private static Outcome voided(PspCharge answer) {
        return switch (answer.status()) {
            case VOIDED, EXPIRED -> new Outcome.Voided();
            case CAPTURED -> new Outcome.Refused(ChargeActionAnswers.Refusal.ALREADY_CAPTURED, null);
            case AUTHORIZED, DECLINED ->
                new Outcome.Refused(
                        ChargeActionAnswers.Refusal.PROCESSOR_REFUSED,
                        "charge_" + answer.status().wireName());
        };
    }

    /** Phase 3: the processor answered. A database failure here leaves the action to recovery. */
    private ChargeActionResult finish(ChargeAction action, Phase phase, Outcome outcome) {
        try {
            return jdbc.inTransaction(c -> finish(c, action, phase, outcome));
        } catch (LostRecord lost) {
            return afterLoss(action);
        } catch (DatabaseException | StoreUnavailableException | LedgerStorageException | LedgerRetryableException e) {
            log.warn(
                    "{} of charge {}: the database failed after the processor answered ({}); left for recovery",
                    action.kind().db(),
                    action.chargeId(),
                    e.getMessage());
            return new ChargeActionResult.OutcomeUnknown(action.chargeId());
        }
    }

    private ChargeActionResult finish(Connection c, ChargeAction action, Phase phase, Outcome outcome) {
        // the record's row lock first, then the charge, then the action (every path takes them in this order)
        if (!phases.checkpoint(c, phase, PROCESSOR_CALLED)) {
            throw new LostRecord();
        }
        ChargeRow charge = charges.lock(c, action.chargeId()).orElseThrow();
        ChargeAction current = actions.lock(c, action.id()).orElseThrow();
        if (current.status() != ChargeAction.Status.PENDING) {
            Jdbc.rollback(c);
            return new ChargeActionResult.Replayed(Objects.requireNonNull(current.answer()));
        }
        Instant now = clock.instant();
        StoredResponse answer;
        switch (outcome) {
            case Outcome.Captured captured -> {
                long hold = holdOf(charge);
                long entry = ledger.capture(
                                c,
                                hold,
                                Money.of(captured.amount(), Currency.of(charge.currency())),
                                "capture:" + charge.id(),
                                "capture of " + charge.id())
                        .id();
                resolve(c, charge, ChargeStatus.SUCCEEDED, captured.amount(), entry, now);
                ChargeRow after = charges.find(c, charge.id()).orElseThrow();
                answer = answers.resolved(after);
                actions.finish(c, current.id(), ChargeAction.Status.SUCCEEDED, entry, null, answer, now);
                events.resolved(c, after, EventType.CHARGE_CAPTURED);
            }
            case Outcome.Voided voided -> {
                long hold = holdOf(charge);
                long entry = ledger.voidHold(
                                c,
                                hold,
                                "void:" + charge.id(),
                                (current.origin() == ChargeAction.Origin.EXPIRY ? "expiry of " : "void of ")
                                        + charge.id())
                        .id();
                resolve(c, charge, ChargeStatus.VOIDED, null, null, now);
                ChargeRow after = charges.find(c, charge.id()).orElseThrow();
                answer = answers.resolved(after);
                actions.finish(c, current.id(), ChargeAction.Status.SUCCEEDED, entry, null, answer, now);
                events.resolved(c, after, EventType.CHARGE_VOIDED);
            }
            case Outcome.Refused refused -> {
                answer = answers.refused(charge, current.kind(), refused.refusal(), current.amount(), refused.code());
                actions.finish(
                        c,
                        current.id(),
                        ChargeAction.Status.REFUSED,
                        null,
                        code(refused.refusal(), refused.code()),
                        answer,
                        now);
            }
        }
        RecordStatus status = outcome instanceof Outcome.Refused ? RecordStatus.FAILED : RecordStatus.COMPLETED;
        if (!phases.finish(c, phase, status, answer)) {
            throw new LostRecord();
        }
        return new ChargeActionResult.Finished(answer);
    }

    private static long holdOf(ChargeRow charge) {
        Long hold = charge.holdEntryId();
        if (charge.status() != ChargeStatus.AUTHORIZED || hold == null) {
            // the active-action index lets only this action resolve the charge
            throw new IllegalStateException(
                    "charge " + charge.id() + " is " + charge.status().db() + " under its pending action");
        }
        return hold;
    }

    private void resolve(
            Connection c,
            ChargeRow charge,
            ChargeStatus status,
            @Nullable Long captured,
            @Nullable Long entry,
            Instant now) {
        if (!charges.resolve(c, charge.id(), status, captured, entry, now)) {
            throw new IllegalStateException("charge " + charge.id() + " changed under its row lock");
        }
    }

    /** What to answer after this owner lost the record: the action's answer if finished, else lease lost. */
    private ChargeActionResult afterLoss(ChargeAction action) {
        Optional<ChargeAction> current = jdbc.inTransaction(c -> actions.findByScope(c, action.scopeKey()));
        if (current.isPresent() && current.get().answer() != null) {
            return new ChargeActionResult.Replayed(
                    Objects.requireNonNull(current.get().answer()));
        }
        return new ChargeActionResult.LeaseLost();
    }

    /** An attempt without an answer: count it and hand the record to recovery, or dead-letter it. */
    private ChargeActionResult recordFailure(ChargeAction action, Phase phase, PspException error) {
        String message = truncate(error.getClass().getSimpleName() + ": " + error.getMessage());
        log.warn("{} of charge {}: processor attempt failed ({})", action.kind().db(), action.chargeId(), message);
        try {
            return jdbc.inTransaction(c -> {
                if (!phases.checkpoint(c, phase, PROCESSOR_CALLED)) {
                    throw new LostRecord();
                }
                Instant now = clock.instant();
                return switch (phases.retryLater(c, phase, message)) {
                    case Retry.Scheduled next -> {
                        actions.recordAttempt(c, action.id(), next.attempt(), message, null, now);
                        Duration delay = Duration.between(now, next.nextAttemptAt());
                        yield new ChargeActionResult.ProcessorUnavailable(
                                action.chargeId(),
                                error.outcomeUnknown(),
                                delay.compareTo(MIN_RETRY_AFTER) < 0 ? MIN_RETRY_AFTER : delay);
                    }
                    case Retry.DeadLettered dead -> {
                        String reason =
                                "no answer from the processor after " + dead.attempts() + " attempts; last: " + message;
                        actions.recordAttempt(c, action.id(), dead.attempts(), message, reason, now);
                        log.error(
                                "{} of charge {} dead-lettered: {}",
                                action.kind().db(),
                                action.chargeId(),
                                reason);
                        yield new ChargeActionResult.DeadLettered(action.chargeId());
                    }
                    case Retry.Lost lost -> throw new LostRecord();
                };
            });
        } catch (LostRecord lost) {
            return afterLoss(action);
        } catch (DatabaseException | StoreUnavailableException e) {
            log.warn(
                    "{} of charge {}: the database failed recording a processor attempt ({})",
                    action.kind().db(),
                    action.chargeId(),
                    e.getMessage());
            return new ChargeActionResult.OutcomeUnknown(action.chargeId());
        }
    }

    /**
     * Carries on with a capture or void whose record recovery took over: sends it to the processor again under
     * the same key and finishes it.
     *
     * @return false when the record is not a capture's or a void's (the worker asks the other kinds)
     */
    @Override
    public boolean resume(Phase phase) {
        Optional<ChargeAction> found = jdbc.inTransaction(c -> actions.findByScope(c, phase.key()));
        if (found.isEmpty()) {
            return false;
        }
        ChargeAction action = found.get();
        if (action.status() == ChargeAction.Status.PENDING) {
            log.info(
                    "recovering the {} of charge {} (attempts so far {})",
                    action.kind().db(),
                    action.chargeId(),
                    phase.attempts());
            execute(action, phase);
        } else {
            RecordStatus status =
                    action.status() == ChargeAction.Status.SUCCEEDED ? RecordStatus.COMPLETED : RecordStatus.FAILED;
            StoredResponse answer = Objects.requireNonNull(action.answer());
            jdbc.inTransaction(c -> phases.finish(c, phase, status, answer));
        }
        return true;
    }

    /**
     * Voids the oldest authorization created before {@code createdBefore} that no capture or void is working
     * on: a void like a client's, under the key {@code expire_<charge id>}, first at the processor, then the
     * ledger's hold, each authorization in transactions of its own.
     *
     * @return whether there was one
     */
    public boolean expireOne(Instant createdBefore) {
        Begin begin = jdbc.inTransaction(c -> {
            List<ChargeRow> expired = charges.lockExpiredAuthorizations(c, createdBefore, 1);
            if (expired.isEmpty()) {
                return null;
            }
            ChargeRow charge = expired.getFirst();
            IdempotencyRequest idempotency = routes.request(
                    IdempotentRoutes.VOID,
                    path(ChargeAction.Kind.VOID, charge.id()),
                    charge.tenant(),
                    IdempotencyKey.parse("expire_" + charge.id()),
                    EMPTY_OBJECT,
                    "application/json");
            return begin(
                    c,
                    idempotency,
                    charge.tenant(),
                    charge.id(),
                    ChargeAction.Kind.VOID,
                    ChargeAction.Origin.EXPIRY,
                    null);
        });
        if (begin == null) {
            return false;
        }
        ChargeActionResult result = run(begin);
        log.info("authorization expired: {}", result.getClass().getSimpleName());
        return true;
    }

    private static String truncate(String s) {
        return s.length() > 500 ? s.substring(0, 500) : s;
    }
}
