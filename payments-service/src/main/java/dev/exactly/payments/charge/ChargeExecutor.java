package dev.exactly.payments.charge;

import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseWrite;
import dev.exactly.idempotency.postgres.Retry;
import dev.exactly.ledger.Account;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.EntryRequest;
import dev.exactly.ledger.EntryWrite;
import dev.exactly.ledger.Ledger;
import dev.exactly.ledger.LedgerRetryableException;
import dev.exactly.ledger.LedgerStorageException;
import dev.exactly.ledger.Money;
import dev.exactly.payments.db.CommitBatcher;
import dev.exactly.payments.db.DatabaseException;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.db.Pipeline;
import dev.exactly.payments.keys.ReplayCounter;
import dev.exactly.payments.ledger.TenantAccounts;
import dev.exactly.psp.PspCharge;
import dev.exactly.psp.PspChargeRequest;
import dev.exactly.psp.PspClient;
import dev.exactly.psp.PspException;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Phases 2 and 3 of a charge, for whoever owns its durable record (a {@link Phase}): the request that
 * created it, a retry that took over an expired lease, the recovery worker, an operator. While they run,
 * the record's lease is kept alive ({@link AtomicPhases#keepAlive}): a processor call slower than the lease
 * keeps the record, so neither recovery nor a retry takes it over and calls the processor again; only an
 * owner that died or froze loses it, one lease after its last renewal.
 *
 * <ol>
 *   <li value="2">Call the processor with the downstream key derived from the charge id and the exact
 *       request persisted in phase 1. A resumed charge first asks the processor what happened under that
 *       key, and sends the same request again only if the processor never recorded it (safe: the processor
 *       honours the key). No answer (timeout, lost connection, 5xx) leaves the charge pending for recovery:
 *       {@link AtomicPhases#retryLater} counts the attempt and hands the record over to the worker after a
 *       backoff (capped, exponential, full jitter); after the last attempt the charge is dead-lettered with
 *       the reason.</li>
 *   <li value="3">One transaction, fenced by the owner token: the durable record finished with the answer
 *       {@link ChargeAnswers} renders (first: its row lock serialises whoever settles the charge), the
 *       journal entry (debit the tenant's clearing account, credit the customer), the charge's final state
 *       and its webhook event. If the owner lost the record, all of it rolls back.</li>
 * </ol>
 * Every step returns a {@link ChargeResult}; none of them builds an HTTP answer.
 */
public final class ChargeExecutor {
    private static final Logger log = LoggerFactory.getLogger(ChargeExecutor.class);
    private static final Duration MIN_RETRY_AFTER = Duration.ofSeconds(1);

    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final AtomicPhases phases;
    private final ReplayCounter replays;
    private final PspClient psp;
    private final Ledger ledger;
    private final TenantAccounts accounts;
    private final ChargeAnswers answers;
    private final InstantSource clock;
    private final ChargeObserver observer;
    private final ChargeEvents events;
    private final @Nullable CommitBatcher batcher;

    /**
     * @param answers  renders the answer a finished charge records
     * @param observer told when a charge passes a step ({@link ChargeObserver#NONE} in the service)
     * @param events   records the charge's webhook event in phase 3's transaction
     * @param batcher  commits phase 3 of charges together, or {@code null}: each alone
     */
    public ChargeExecutor(
            Storage storage,
            PspClient psp,
            Ledger ledger,
            TenantAccounts accounts,
            ChargeAnswers answers,
            ChargeObserver observer,
            ChargeEvents events,
            @Nullable CommitBatcher batcher) {
        this.jdbc = storage.jdbc();
        this.charges = storage.charges();
        this.phases = storage.phases();
        this.replays = storage.replays();
        this.psp = psp;
        this.ledger = ledger;
        this.accounts = accounts;
        this.answers = answers;
        this.clock = storage.clock();
        this.observer = observer;
        this.events = events;
        this.batcher = batcher;
    }

    /**
     * Thrown inside a transaction when a fenced write finds that the owner lost the record, or the charge
     * settled meanwhile: roll back.
     */
    private static final class LostRecord extends RuntimeException {
        LostRecord() {
            super(null, null, false, false);
        }
    }

    /**
     * Drives an owned, pending charge to its answer.
     *
     * @param fresh whether phase 1 of this very request created the charge (then the processor is called
     *              directly; otherwise it is asked first)
     */
    public ChargeResult execute(ChargeRow row, Phase phase, boolean fresh) {
        PspChargeRequest request = ChargeRequest.processorRequest(row.processorRequest());
        try (LeaseKeeper alive = phases.keepAlive(phase)) {
            PspCharge answer;
            try {
                Optional<PspCharge> known = fresh ? Optional.empty() : psp.findByIdempotencyKey(row.downstreamKey());
                answer = known.isPresent() ? known.get() : psp.charge(request, row.downstreamKey());
            } catch (PspException e) {
                // the record is handed over to recovery after a backoff: renewals stop first (one still
                // under way is refused: the hand-over gives the record an owner token nobody holds)
                alive.close();
                return recordFailure(row, phase, e);
            }
            observer.processorAnswered(row);
            return finish(row, phase, ChargeOutcome.of(answer));
        }
    }

    /**
     * Phase 3: one transaction, fenced by the owner token. The processor has been called by now, so a
     * database failure here is "outcome unknown": the charge stays pending with its record, and recovery
     * (or a retry with the same key, once the lease ends) settles it.
     */
    ChargeResult finish(ChargeRow row, Phase phase, ChargeOutcome outcome) {
        try {
            return finishInTransaction(row, phase, outcome);
        } catch (DatabaseException | StoreUnavailableException | LedgerStorageException | LedgerRetryableException e) {
            log.warn(
                    "charge {}: the database failed after the processor answered ({}); left for recovery",
                    row.id(),
                    e.getMessage());
            return new ChargeResult.OutcomeUnknown(row.id(), ChargeResult.When.FINISHING);
        }
    }

    /**
     * Phase 3's statements go to the database in one round trip (a {@link Pipeline}), with the commit:
     * <ol>
     *   <li>the durable record finished, fenced by the owner token ({@link AtomicPhases#finishing}). First:
     *       its row lock serialises whoever settles the charge, as a checkpoint would, in the write the phase
     *       needs anyway. While this owner holds it, nobody else settles the charge (whoever settles an open
     *       charge owns its record, and finishes the record with it), so the charge is still open and its row
     *       needs no read;</li>
     *   <li>the journal entry of a captured charge, or the hold of an authorization (idempotent by their
     *       references);</li>
     *   <li>the charge's final state, with the entry found by its reference, from an open state only; sent with
     *       the commit, the same statement is a guard ({@link ChargeRepository#finishingGuarded}) that raises
     *       unless it finished the charge and this transaction finished the record and wrote the entry;</li>
     *   <li>its webhook event, which carries the charge as the statement before leaves it (computed here:
     *       {@link ChargeRow#finished});</li>
     *   <li>{@code COMMIT}, which the server skips after the guard raised.</li>
     * </ol>
     * When the guard refused, or a balance floor could refuse the entry ({@link EntryWrite#mayBeRefused}),
     * phase 3 runs with the commit apart: the same statements in one round trip, then their results decide
     * (the owner lost the record, or the charge was settled all the same: everything rolls back, the
     * record's finish with it, and the answer is the charge's; the entry's reference held another entry,
     * or a floor refused it: the ledger's exception), then the commit.
     */
    private ChargeResult finishInTransaction(ChargeRow row, Phase phase, ChargeOutcome outcome) {
        Currency currency = Currency.of(row.currency());
        Account clearing = null;
        Account customer = null;
        if (outcome instanceof ChargeOutcome.Captured || outcome instanceof ChargeOutcome.Authorized) {
            // opened (idempotently) outside the transaction, so that it holds one pooled connection only
            clearing = accounts.clearing(row.tenant(), currency);
            customer = accounts.customer(row.tenant(), row.customer(), currency);
        }
        Account debit = clearing;
        Account credit = customer;
        try {
            // the answer depends on the charge and the outcome only (not on the journal entry)
            StoredResponse answer = answers.finished(row, outcome);
            Instant now = clock.instant();
            try {
                Optional<ChargeResult> together =
                        finishingTogether(row, phase, outcome, debit, credit, currency, answer, now);
                if (together.isPresent()) {
                    return together.get();
                }
                return jdbc.inTransaction(
                        c -> finishing(c, row, phase, outcome, debit, credit, currency, answer, now, true));
            } catch (GuardRefused refused) {
                // rolled back: again with the commit apart, so that the statements' results decide
                return jdbc.inTransaction(
                        c -> finishing(c, row, phase, outcome, debit, credit, currency, answer, now, false));
            }
        } catch (LostRecord lost) {
            return afterLoss(row);
        }
    }

    /** Thrown inside phase 3's transaction when its guard refused the commit: roll back, run it apart. */
    private static final class GuardRefused extends RuntimeException {
        GuardRefused() {
            super(null, null, false, false);
        }
    }

    /**
     * Phase 3's statements in one round trip; with {@code commitTogether} (and an entry no floor can refuse)
     * the guard and the commit too.
     */
    private ChargeResult finishing(
            Connection c,
            ChargeRow row,
            Phase phase,
            ChargeOutcome outcome,
            @Nullable Account debit,
            @Nullable Account credit,
            Currency currency,
            StoredResponse answer,
            Instant now,
            boolean commitTogether) {
        Finishing finishing = steps(c, row, phase, outcome, debit, credit, currency, answer, now, commitTogether);
        if (finishing.guarded()) {
            finishing.pipeline().commit();
        }
        observer.beforeCommit(row);
        try {
            finishing.pipeline().run(c);
        } catch (DatabaseException e) {
            if (finishing.guarded() && e.isGuardRefusal()) {
                throw new GuardRefused();
            }
            throw e;
        }
        return finishing.result(row);
    }

    /**
     * Phase 3 committed with the phase 3 of other charges ({@link CommitBatcher}), its guard in its statements;
     * empty when it must run alone: a balance floor could refuse its entry (the results decide before the
     * commit then), or another charge of the batch failed it.
     */
    private Optional<ChargeResult> finishingTogether(
            ChargeRow row,
            Phase phase,
            ChargeOutcome outcome,
            @Nullable Account debit,
            @Nullable Account credit,
            Currency currency,
            StoredResponse answer,
            Instant now) {
        if (batcher == null) {
            return Optional.empty();
        }
        Finishing finishing = steps(null, row, phase, outcome, debit, credit, currency, answer, now, true);
        if (!finishing.guarded()) {
            return Optional.empty();
        }
        observer.beforeCommit(row);
        try {
            // batches take the customer's balance row in the order of its account
            String order = credit == null ? "" : String.format("%019d", credit.id());
            if (!batcher.commit(finishing.pipeline(), order)) {
                return Optional.empty();
            }
        } catch (DatabaseException e) {
            if (e.isGuardRefusal()) {
                throw new GuardRefused();
            }
            throw e;
        }
        return Optional.of(finishing.result(row));
    }

    /**
     * Phase 3's statements, not sent yet.
     *
     * @param guarded whether the guard is among them, so that the commit can go with them
     */
    private record Finishing(
            Pipeline pipeline,
            Pipeline.Result<Boolean> owned,
            Pipeline.@Nullable Result<Boolean> settled,
            boolean guarded,
            StoredResponse answer) {

        ChargeResult result(ChargeRow row) {
            if (!owned.get() || (settled != null && !settled.get())) {
                if (guarded) {
                    throw new IllegalStateException("phase 3 of charge " + row.id() + " committed past its guard");
                }
                throw new LostRecord();
            }
            return new ChargeResult.Finished(answer);
        }
    }

    /**
     * Phase 3's statements: the record's finish, the entry or hold, the charge's final state (guarded when
     * {@code commitTogether} and no floor can refuse the entry), its event.
     *
     * @param c the transaction's connection, to prepare the entry on; {@code null}: the entry is prepared on
     *          a pooled connection, when its accounts are not known yet
     */
    private Finishing steps(
            @Nullable Connection c,
            ChargeRow row,
            Phase phase,
            ChargeOutcome outcome,
            @Nullable Account debit,
            @Nullable Account credit,
            Currency currency,
            StoredResponse answer,
            Instant now,
            boolean commitTogether) {
        Pipeline pipeline = new Pipeline();
        PhaseWrite finish = phases.finishing(phase, outcome.recordStatus(), answer);
        Pipeline.Result<Boolean> owned = pipeline.add(finish.sql(), finish::bind, finish::applied);
        String entryRef = null;
        String holdRef = null;
        EntryWrite entry = null;
        if (outcome instanceof ChargeOutcome.Captured) {
            entryRef = "charge:" + row.id();
            EntryRequest request = entry(row, debit, credit, currency, entryRef, "charge ");
            entry = c != null ? ledger.preparePost(c, request) : ledger.preparePost(request);
        } else if (outcome instanceof ChargeOutcome.Authorized) {
            holdRef = "auth:" + row.id();
            EntryRequest request = entry(row, debit, credit, currency, holdRef, "authorization ");
            entry = c != null ? ledger.prepareHold(c, request) : ledger.prepareHold(request);
        }
        if (entry != null) {
            pipeline.add(entry.sql(), entry::bind, entry::result);
        }
        boolean guarded = commitTogether && (entry == null || !entry.mayBeRefused());
        Pipeline.@Nullable Result<Boolean> settled = null;
        if (guarded) {
            charges.finishingGuarded(
                    pipeline,
                    row.id(),
                    outcome,
                    entryRef,
                    holdRef,
                    answer,
                    now,
                    phase.key(),
                    phase.owner().value(),
                    entryRef != null ? entryRef : holdRef);
        } else {
            settled = charges.finishing(pipeline, row.id(), outcome, entryRef, holdRef, answer, now);
        }
        events.finished(pipeline, row.finished(outcome, answer, now), outcome);
        return new Finishing(pipeline, owned, settled, guarded, answer);
    }

    /**
     * The ledger's side of a charge: debit the clearing account, credit the customer. Posted for a captured
     * charge; held (a pending entry, outside both available balances) for an authorization.
     */
    private static EntryRequest entry(
            ChargeRow charge,
            @Nullable Account clearing,
            @Nullable Account customer,
            Currency currency,
            String externalRef,
            String describedAs) {
        if (clearing == null || customer == null) {
            throw new IllegalStateException("accounts are opened before a charge is journaled or held");
        }
        Money money = Money.of(charge.amount(), currency);
        return EntryRequest.builder()
                .debit(clearing.id(), money)
                .credit(customer.id(), money)
                .externalRef(externalRef)
                .description(describedAs + charge.id())
                .build();
    }

    /** What to answer after this owner lost the record: the charge's answer if finished, else lease lost. */
    private ChargeResult afterLoss(ChargeRow row) {
        Optional<ChargeRow> current = jdbc.inTransaction(c -> charges.find(c, row.id()));
        if (current.isPresent() && current.get().status().isFinished()) {
            return replay(current.get());
        }
        return new ChargeResult.LeaseLost();
    }

    /** An attempt without an answer: count it, hand the record to recovery, or dead-letter the charge. */
    ChargeResult recordFailure(ChargeRow row, Phase phase, PspException error) {
        try {
            return recordFailureInTransaction(row, phase, error);
        } catch (DatabaseException | StoreUnavailableException | LedgerStorageException | LedgerRetryableException e) {
            log.warn("charge {}: the database failed recording a processor attempt ({})", row.id(), e.getMessage());
            return new ChargeResult.OutcomeUnknown(row.id(), ChargeResult.When.RECORDING_ATTEMPT);
        }
    }

    private ChargeResult recordFailureInTransaction(ChargeRow row, Phase phase, PspException error) {
        boolean unknown = error.outcomeUnknown() || row.recoveryPoint() == RecoveryPoint.PROCESSOR_CALLED;
        RecoveryPoint point = unknown ? RecoveryPoint.PROCESSOR_CALLED : RecoveryPoint.CHARGE_CREATED;
        String message = truncate(error.getClass().getSimpleName() + ": " + error.getMessage());
        log.warn("charge {}: processor attempt failed ({})", row.id(), message);
        try {
            return jdbc.inTransaction(c -> {
                if (!phases.checkpoint(c, phase, point.checkpoint())) {
                    throw new LostRecord();
                }
                ChargeRow current = charges.lock(c, row.id()).orElseThrow();
                if (current.status().isFinished()) {
                    Jdbc.rollback(c);
                    return replay(current);
                }
                if (current.status() == ChargeStatus.DEAD_LETTERED) {
                    Jdbc.rollback(c);
                    return new ChargeResult.DeadLettered(current.id());
                }
                Instant now = clock.instant();
                return switch (phases.retryLater(c, phase, message)) {
                    case Retry.Scheduled next -> {
                        charges.recordFailure(
                                c, current.id(), next.attempt(), message, point, ChargeStatus.PENDING, null, now);
                        Duration delay = Duration.between(now, next.nextAttemptAt());
                        yield new ChargeResult.ProcessorUnavailable(
                                current.id(), unknown, delay.compareTo(MIN_RETRY_AFTER) < 0 ? MIN_RETRY_AFTER : delay);
                    }
                    case Retry.DeadLettered dead -> {
                        String reason =
                                "no answer from the processor after " + dead.attempts() + " attempts; last: " + message;
                        charges.recordFailure(
                                c,
                                current.id(),
                                dead.attempts(),
                                message,
                                point,
                                ChargeStatus.DEAD_LETTERED,
                                reason,
                                now);
                        log.error("charge {} dead-lettered: {}", current.id(), reason);
                        yield new ChargeResult.DeadLettered(current.id());
                    }
                    case Retry.Lost lost -> throw new LostRecord();
                };
            });
        } catch (LostRecord lost) {
            return afterLoss(row);
        }
    }

    /** The answer recorded on a finished charge row, replayed (the row outlives its durable record). */
    ChargeResult replay(ChargeRow finished) {
        StoredResponse answer = finished.answer();
        if (answer == null) {
            throw new IllegalStateException("finished charge " + finished.id() + " has no recorded answer");
        }
        replays.count(finished.scopeKey());
        return new ChargeResult.Replayed(answer);
    }

    private static String truncate(String s) {
        return s.length() > 500 ? s.substring(0, 500) : s;
    }
}
