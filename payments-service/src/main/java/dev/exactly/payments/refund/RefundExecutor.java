package dev.exactly.payments.refund;

import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.Retry;
import dev.exactly.ledger.Account;
import dev.exactly.ledger.BalanceFloorException;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.EntryRequest;
import dev.exactly.ledger.Ledger;
import dev.exactly.ledger.LedgerRetryableException;
import dev.exactly.ledger.LedgerStorageException;
import dev.exactly.ledger.Money;
import dev.exactly.payments.charge.ChargeRepository;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.payments.charge.PhaseKind;
import dev.exactly.payments.charge.Storage;
import dev.exactly.payments.db.DatabaseException;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.keys.ReplayCounter;
import dev.exactly.payments.ledger.TenantAccounts;
import dev.exactly.payments.webhooks.EventType;
import dev.exactly.payments.webhooks.Outbox;
import dev.exactly.psp.PspClient;
import dev.exactly.psp.PspException;
import dev.exactly.psp.PspRefund;
import dev.exactly.psp.PspRefundRequest;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Phases 2 and 3 of a refund, for whoever owns its durable record (a {@link Phase}): the request that
 * created it, a retry that took over an expired lease, the recovery worker (as a {@link PhaseKind}). While
 * they run, the record's lease is kept alive ({@link AtomicPhases#keepAlive}).
 *
 * <ol>
 *   <li value="2">Call the processor's refund with the downstream key derived from the refund id and the
 *       exact request persisted in phase 1. A resumed refund first asks the processor what happened under
 *       that key ({@link PspClient#findRefundByIdempotencyKey}) and sends the same request again only if
 *       the processor never recorded it. No answer (timeout, lost connection, 5xx) leaves the refund
 *       pending, its amount still reserved on the charge: {@link AtomicPhases#retryLater} counts the
 *       attempt and hands the record to recovery after a backoff; after the last attempt the refund is
 *       dead-lettered. Never a second processor refund: every send carries the same key.</li>
 *   <li value="3">One transaction, fenced by the owner token, locks taken as everywhere (record, charge,
 *       refund, balances): the refund's final state, and for a refund the processor made, the journal
 *       entry linked to the charge's (debit the customer, credit clearing), the charge's refunded amount
 *       and the {@code refund.succeeded} event; the answer {@link RefundAnswers} renders; the record
 *       finished with it. A refusal by the processor is recorded as a failed refund (402, replayed) and
 *       releases the reservation.</li>
 * </ol>
 */
public final class RefundExecutor implements PhaseKind {
    private static final Logger log = LoggerFactory.getLogger(RefundExecutor.class);
    private static final Duration MIN_RETRY_AFTER = Duration.ofSeconds(1);

    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final RefundRepository refunds;
    private final AtomicPhases phases;
    private final ReplayCounter replays;
    private final PspClient psp;
    private final Ledger ledger;
    private final TenantAccounts accounts;
    private final RefundAnswers answers;
    private final Outbox outbox;
    private final InstantSource clock;
    private final RefundObserver observer;

    /**
     * @param answers  renders the answers finished refunds record
     * @param outbox   takes the {@code refund.succeeded} event in the refund's finishing transaction
     * @param observer told when a refund passes a step ({@link RefundObserver#NONE} in the service)
     */
    public RefundExecutor(
            Storage storage,
            RefundRepository refunds,
            PspClient psp,
            Ledger ledger,
            TenantAccounts accounts,
            RefundAnswers answers,
            Outbox outbox,
            RefundObserver observer) {
        this.jdbc = storage.jdbc();
        this.charges = storage.charges();
        this.refunds = refunds;
        this.phases = storage.phases();
        this.replays = storage.replays();
        this.psp = psp;
        this.ledger = ledger;
        this.accounts = accounts;
        this.answers = answers;
        this.outbox = outbox;
        this.clock = storage.clock();
        this.observer = observer;
    }

    /** Thrown inside a transaction when a fenced write finds that the owner lost the record: roll back. */
    private static final class LostRecord extends RuntimeException {
        LostRecord() {
            super(null, null, false, false);
        }
    }

    /**
     * Drives an owned, pending refund to its answer.
     *
     * @param fresh whether phase 1 of this very request created the refund (then the processor is called
     *              directly; otherwise it is asked first)
     */
    public RefundResult execute(RefundRow row, Phase phase, boolean fresh) {
        PspRefundRequest request = RefundRequest.processorRequest(
                Objects.requireNonNull(row.processorRequest(), "a pending refund has its processor request"));
        String key = Objects.requireNonNull(row.downstreamKey(), "a pending refund has its downstream key");
        try (LeaseKeeper alive = phases.keepAlive(phase)) {
            PspRefund answer;
            try {
                Optional<PspRefund> known = fresh ? Optional.empty() : psp.findRefundByIdempotencyKey(key);
                answer = known.isPresent() ? known.get() : psp.refund(request, key);
            } catch (PspException e) {
                // renewals stop first: the hand-over gives the record an owner token nobody holds
                alive.close();
                return recordFailure(row, phase, e);
            }
            observer.processorAnswered(row);
            return finish(row, phase, answer);
        }
    }

    /** Recovery took the refund's record over: carry on from where its row stands. */
    @Override
    public boolean resume(Phase phase) {
        RefundRow row =
                jdbc.inTransaction(c -> refunds.findByScope(c, phase.key())).orElse(null);
        if (row == null) {
            return false;
        }
        switch (row.status()) {
            case PENDING -> {
                log.info(
                        "recovering refund {} from {} (attempts so far {})",
                        row.id(),
                        phase.checkpoint() == null
                                ? "the start"
                                : phase.checkpoint().name(),
                        phase.attempts());
                execute(row, phase, false);
            }
            case SUCCEEDED, FAILED, REFUSED -> {
                StoredResponse answer = Objects.requireNonNull(row.answer(), "a finished refund has its answer");
                RecordStatus status =
                        row.status() == RefundStatus.SUCCEEDED ? RecordStatus.COMPLETED : RecordStatus.FAILED;
                jdbc.inTransaction(c -> phases.finish(c, phase, status, answer));
            }
            case DEAD_LETTERED ->
                throw new IllegalStateException("refund " + row.id() + " is dead-lettered: an operator settles it");
        }
        return true;
    }

    /**
     * Phase 3. The processor has answered by now, so a database failure here is "outcome unknown": the
     * refund stays pending with its record, and recovery (or a retry with the same key) settles it.
     */
    private RefundResult finish(RefundRow row, Phase phase, PspRefund answer) {
        try {
            return finishInTransaction(row, phase, answer);
        } catch (DatabaseException | StoreUnavailableException | LedgerStorageException | LedgerRetryableException e) {
            log.warn(
                    "refund {}: the database failed after the processor answered ({}); left for recovery",
                    row.id(),
                    e.getMessage());
            return new RefundResult.OutcomeUnknown(row.id());
        }
    }

    /** The accounts a refund moves money between (the customer's is debited). */
    private record RefundAccounts(Account customer, Account clearing) {}

    private RefundResult finishInTransaction(RefundRow row, Phase phase, PspRefund answer) {
        RefundAccounts moved = null;
        if (answer.succeeded()) {
            // opened (idempotently) outside the transaction, so that it holds one pooled connection only
            ChargeRow charge =
                    jdbc.inTransaction(c -> charges.find(c, row.chargeId())).orElseThrow();
            Currency currency = Currency.of(charge.currency());
            moved = new RefundAccounts(
                    accounts.customer(row.tenant(), charge.customer(), currency),
                    accounts.clearing(row.tenant(), currency));
        }
        RefundAccounts refundAccounts = moved;
        try {
            return jdbc.inTransaction(c -> {
                // the record's row lock first, then the charge's, then the refund's, then balances
                if (!phases.checkpoint(c, phase, row.recoveryPoint().checkpoint())) {
                    throw new LostRecord();
                }
                ChargeRow charge = charges.lock(c, row.chargeId()).orElseThrow();
                RefundRow current = refunds.lock(c, row.id()).orElseThrow();
                if (current.status().isFinished()) {
                    Jdbc.rollback(c);
                    return replay(current);
                }
                Instant now = clock.instant();
                StoredResponse recorded;
                if (refundAccounts != null) {
                    long entryId = journal(c, current, charge, refundAccounts);
                    if (!charges.addRefund(c, charge.id(), current.amount(), now)) {
                        throw new IllegalStateException("refund " + current.id() + " exceeds charge " + charge.id()
                                + " although its amount was reserved");
                    }
                    recorded = answers.refunded(new Refund(
                            current.id(), charge.id(), current.amount(), charge.currency(), current.createdAt()));
                    finishRow(c, current, RefundStatus.SUCCEEDED, null, entryId, answer.id(), recorded, now);
                    outbox.record(
                            c,
                            current.tenant(),
                            EventType.REFUND_SUCCEEDED,
                            current.id(),
                            new String(recorded.body(), StandardCharsets.UTF_8));
                } else {
                    String code = Objects.requireNonNullElse(answer.failureCode(), "refund_failed");
                    recorded = answers.failed(current.id(), charge.id(), code);
                    finishRow(c, current, RefundStatus.FAILED, code, null, answer.id(), recorded, now);
                }
                RecordStatus status = refundAccounts != null ? RecordStatus.COMPLETED : RecordStatus.FAILED;
                if (!phases.finish(c, phase, status, recorded)) {
                    throw new LostRecord();
                }
                observer.beforeCommit(current);
                return new RefundResult.Finished(recorded);
            });
        } catch (LostRecord lost) {
            return afterLoss(row);
        }
    }

    private void finishRow(
            Connection c,
            RefundRow refund,
            RefundStatus status,
            @Nullable String failureCode,
            @Nullable Long entryId,
            String processorRefundId,
            StoredResponse answer,
            Instant now) {
        if (!refunds.finish(c, refund.id(), status, failureCode, entryId, processorRefundId, answer, now)) {
            throw new IllegalStateException("refund " + refund.id() + " changed under its row lock");
        }
    }

    private long journal(Connection c, RefundRow refund, ChargeRow charge, RefundAccounts accounts) {
        Long chargeEntry = charge.ledgerEntryId();
        if (chargeEntry == null) {
            throw new IllegalStateException(
                    "refund " + refund.id() + " of charge " + charge.id() + " without its entry");
        }
        Money money = Money.of(refund.amount(), Currency.of(charge.currency()));
        try {
            // idempotent by its reference: a refund journaled before gets that one entry back
            return ledger.post(
                            c,
                            EntryRequest.refundOf(chargeEntry)
                                    .debit(accounts.customer().id(), money)
                                    .credit(accounts.clearing().id(), money)
                                    .externalRef("refund:" + refund.id())
                                    .description("refund " + refund.id() + " of charge " + charge.id())
                                    .build())
                    .id();
        } catch (BalanceFloorException floor) {
            throw new IllegalStateException("customer balance below the refunds of one charge", floor);
        }
    }

    /** What to answer after this owner lost the record: the refund's answer if finished, else lease lost. */
    private RefundResult afterLoss(RefundRow row) {
        Optional<RefundRow> current = jdbc.inTransaction(c -> refunds.findByScope(c, row.scopeKey()));
        if (current.isPresent() && current.get().status().isFinished()) {
            return replay(current.get());
        }
        return new RefundResult.LeaseLost();
    }

    /** An attempt without an answer: count it, hand the record to recovery, or dead-letter the refund. */
    private RefundResult recordFailure(RefundRow row, Phase phase, PspException error) {
        try {
            return recordFailureInTransaction(row, phase, error);
        } catch (DatabaseException | StoreUnavailableException e) {
            log.warn("refund {}: the database failed recording a processor attempt ({})", row.id(), e.getMessage());
            return new RefundResult.OutcomeUnknown(row.id());
        }
    }

    private RefundResult recordFailureInTransaction(RefundRow row, Phase phase, PspException error) {
        boolean unknown = error.outcomeUnknown() || row.recoveryPoint() == RefundPoint.PROCESSOR_CALLED;
        RefundPoint point = unknown ? RefundPoint.PROCESSOR_CALLED : RefundPoint.REFUND_CREATED;
        String message = truncate(error.getClass().getSimpleName() + ": " + error.getMessage());
        log.warn("refund {}: processor attempt failed ({})", row.id(), message);
        try {
            return jdbc.inTransaction(c -> {
                if (!phases.checkpoint(c, phase, point.checkpoint())) {
                    throw new LostRecord();
                }
                RefundRow current = refunds.lock(c, row.id()).orElseThrow();
                if (current.status().isFinished()) {
                    Jdbc.rollback(c);
                    return replay(current);
                }
                if (current.status() == RefundStatus.DEAD_LETTERED) {
                    Jdbc.rollback(c);
                    return new RefundResult.DeadLettered(current.id());
                }
                Instant now = clock.instant();
                return switch (phases.retryLater(c, phase, message)) {
                    case Retry.Scheduled next -> {
                        refunds.recordFailure(
                                c, current.id(), next.attempt(), message, point, RefundStatus.PENDING, null, now);
                        Duration delay = Duration.between(now, next.nextAttemptAt());
                        yield new RefundResult.ProcessorUnavailable(
                                current.id(), unknown, delay.compareTo(MIN_RETRY_AFTER) < 0 ? MIN_RETRY_AFTER : delay);
                    }
                    case Retry.DeadLettered dead -> {
                        String reason =
                                "no answer from the processor after " + dead.attempts() + " attempts; last: " + message;
                        refunds.recordFailure(
                                c,
                                current.id(),
                                dead.attempts(),
                                message,
                                point,
                                RefundStatus.DEAD_LETTERED,
                                reason,
                                now);
                        log.error("refund {} dead-lettered: {}", current.id(), reason);
                        yield new RefundResult.DeadLettered(current.id());
                    }
                    case Retry.Lost lost -> throw new LostRecord();
                };
            });
        } catch (LostRecord lost) {
            return afterLoss(row);
        }
    }

    /** The answer recorded on a finished refund row, replayed (the row outlives its durable record). */
    RefundResult replay(RefundRow finished) {
        StoredResponse answer = finished.answer();
        if (answer == null) {
            throw new IllegalStateException("finished refund " + finished.id() + " has no recorded answer");
        }
        replays.count(finished.scopeKey());
        return new RefundResult.Replayed(answer);
    }

    private static String truncate(String s) {
        return s.length() > 500 ? s.substring(0, 500) : s;
    }
}
