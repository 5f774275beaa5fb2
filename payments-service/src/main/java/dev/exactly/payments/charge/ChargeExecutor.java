package dev.exactly.payments.charge;

import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.ledger.Account;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.DuplicateEntryException;
import dev.exactly.ledger.EntryRequest;
import dev.exactly.ledger.Ledger;
import dev.exactly.ledger.LedgerRetryableException;
import dev.exactly.ledger.LedgerStorageException;
import dev.exactly.ledger.Money;
import dev.exactly.payments.db.DatabaseException;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.keys.DurableTier;
import dev.exactly.payments.keys.RetryPolicy;
import dev.exactly.payments.ledger.TenantAccounts;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
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
 * Phases 2 and 3 of a charge, for whoever owns its durable record: the request that created it, a
 * retry that took over an expired lease, the recovery worker, an operator. While they run, the record's
 * lease is kept alive ({@link DurableTier#keepAlive}): a processor call slower than the lease keeps the
 * record, so neither recovery nor a retry takes it over and calls the processor again; only an owner
 * that died or froze loses it, one lease after its last renewal.
 *
 * <ol>
 *   <li value="2">Call the processor with the downstream key derived from the charge id and the exact
 *       request persisted in phase 1. A resumed charge first asks the processor what happened under that
 *       key, and sends the same request again only if the processor never recorded it (safe: the processor
 *       honours the key). No answer (timeout, lost connection, 5xx) leaves the charge pending for recovery:
 *       the attempt is counted, and the record is handed over to the worker after a backoff (capped,
 *       exponential, full jitter); after the last attempt the charge is dead-lettered with the reason.</li>
 *   <li value="3">One transaction, fenced by the owner token: the charge's final state, the journal entry
 *       (debit the tenant's clearing account, credit the customer), the recorded answer, and the durable
 *       record finished with that answer. If the owner lost the record, all of it rolls back.</li>
 * </ol>
 */
public final class ChargeExecutor {
    private static final Logger log = LoggerFactory.getLogger(ChargeExecutor.class);
    private static final Duration DEAD_LETTER_HANDOVER = Duration.ofMillis(1);

    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final DurableTier durable;
    private final PspClient psp;
    private final Ledger ledger;
    private final TenantAccounts accounts;
    private final RetryPolicy retries;
    private final InstantSource clock;
    private final ChargeObserver observer;

    /**
     * @param retries  attempts and backoff of processor calls that got no answer
     * @param observer told when a charge passes a step ({@link ChargeObserver#NONE} in the service)
     */
    public ChargeExecutor(Jdbc jdbc, ChargeRepository charges, DurableTier durable, PspClient psp, Ledger ledger,
            TenantAccounts accounts, RetryPolicy retries, InstantSource clock, ChargeObserver observer) {
        this.jdbc = jdbc;
        this.charges = charges;
        this.durable = durable;
        this.psp = psp;
        this.ledger = ledger;
        this.accounts = accounts;
        this.retries = retries;
        this.clock = clock;
        this.observer = observer;
    }

    /** Thrown inside a transaction when a fenced write finds that the owner lost the record: roll back. */
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
    public ApiResponse execute(ChargeRow row, OwnerToken owner, boolean fresh) {
        PspChargeRequest request = ChargeRequest.processorRequest(row.processorRequest());
        try (LeaseKeeper alive = durable.keepAlive(row.scopeKey(), owner)) {
            PspCharge answer;
            try {
                Optional<PspCharge> known = fresh ? Optional.empty() : psp.findByIdempotencyKey(row.downstreamKey());
                answer = known.isPresent() ? known.get() : psp.charge(request, row.downstreamKey());
            } catch (PspException e) {
                // the record is handed over to recovery after a backoff: renewals must stop first (one
                // already sent may still land and postpone the hand-over by at most one lease)
                alive.close();
                return recordFailure(row, owner, e);
            }
            observer.processorAnswered(row);
            return finish(row, owner, answer);
        }
    }

    /** Phase 3 with the processor's answer. */
    ApiResponse finish(ChargeRow row, OwnerToken owner, PspCharge answer) {
        Outcome outcome = answer.captured()
                ? Outcome.captured(answer.id())
                : Outcome.failed(answer.id(), answer.declineCode() == null ? "card_declined" : answer.declineCode(), null, null);
        return finish(row, owner, outcome);
    }

    /**
     * The final state of a charge.
     *
     * @param status            succeeded or failed
     * @param processorChargeId the processor's id, when known
     * @param failureCode       the decline code of a failure
     * @param failureReason     an operator's reason for a failure, or {@code null}
     * @param resolution        an operator's note, or {@code null}
     */
    record Outcome(ChargeStatus status, @Nullable String processorChargeId, @Nullable String failureCode,
            @Nullable String failureReason, @Nullable String resolution) {
        static Outcome captured(@Nullable String processorChargeId) {
            return new Outcome(ChargeStatus.SUCCEEDED, processorChargeId, null, null, null);
        }

        static Outcome failed(@Nullable String processorChargeId, String code, @Nullable String reason,
                @Nullable String resolution) {
            return new Outcome(ChargeStatus.FAILED, processorChargeId, code, reason, resolution);
        }

        Outcome resolvedBy(String note) {
            return new Outcome(status, processorChargeId, failureCode, failureReason, note);
        }
    }

    /**
     * Phase 3: one transaction, fenced by the owner token; the answer it recorded. The processor has been
     * called by now, so a database failure here is "outcome unknown": the charge stays pending with its
     * record, and recovery (or a retry with the same key, once the lease ends) settles it.
     */
    ApiResponse finish(ChargeRow row, OwnerToken owner, Outcome outcome) {
        try {
            return finishInTransaction(row, owner, outcome);
        } catch (DatabaseException | StoreUnavailableException | LedgerStorageException | LedgerRetryableException e) {
            log.warn("charge {}: the database failed after the processor answered ({}); left for recovery",
                    row.id(), e.getMessage());
            return ApiProblems.outcomeUnknown("the database failed after the processor was called; the charge "
                    + "will be completed by recovery", row.id());
        }
    }

    private ApiResponse finishInTransaction(ChargeRow row, OwnerToken owner, Outcome outcome) {
        Currency currency = Currency.of(row.currency());
        Account clearing = null;
        Account customer = null;
        if (outcome.status() == ChargeStatus.SUCCEEDED) {
            // opened (idempotently) outside the transaction, so that it holds one pooled connection only
            clearing = accounts.clearing(row.tenant(), currency);
            customer = accounts.customer(row.tenant(), row.customer(), currency);
        }
        Account debit = clearing;
        Account credit = customer;
        try {
            return jdbc.inTransaction(c -> {
                // the record's row lock first (every path takes record, then charge, then balances)
                if (!durable.recoveryPoint(c, row.scopeKey(), owner, row.recoveryPoint().db())) {
                    throw new LostRecord();
                }
                ChargeRow current = charges.lock(c, row.id()).orElseThrow();
                if (current.status().isFinished()) {
                    Jdbc.rollback(c);
                    return durable.replayRow(current.scopeKey(), recorded(current));
                }
                Instant now = clock.instant();
                ApiResponse response;
                Long entryId = null;
                if (outcome.status() == ChargeStatus.SUCCEEDED) {
                    entryId = journal(c, current, debit, credit, currency);
                    response = ApiResponse.created(ChargeViews.location(current.id()), Json.write(ChargeViews.charge(
                            current, ChargeStatus.SUCCEEDED, outcome.processorChargeId(), null, 0)));
                } else {
                    String code = outcome.failureCode() == null ? "card_declined" : outcome.failureCode();
                    response = outcome.failureReason() == null
                            ? ApiProblems.cardDeclined(current.id(), code)
                            : ApiProblems.chargeFailed(current.id(), outcome.failureReason());
                }
                if (!charges.finish(c, current.id(), outcome.status(), outcome.processorChargeId(),
                        outcome.failureCode(), outcome.failureReason(), entryId, response, outcome.resolution(), now)) {
                    throw new IllegalStateException("charge " + current.id() + " changed under its row lock");
                }
                if (!durable.complete(c, row.scopeKey(), owner, response)) {
                    throw new LostRecord();
                }
                observer.beforeCommit(current);
                return response;
            });
        } catch (LostRecord lost) {
            return afterLoss(row);
        }
    }

    private long journal(Connection c, ChargeRow charge, @Nullable Account clearing, @Nullable Account customer,
            Currency currency) {
        if (clearing == null || customer == null) {
            throw new IllegalStateException("accounts are opened before a succeeded charge is journaled");
        }
        Money money = Money.of(charge.amount(), currency);
        try {
            return ledger.post(c, EntryRequest.builder()
                    .debit(clearing.id(), money)
                    .credit(customer.id(), money)
                    .externalRef("charge:" + charge.id())
                    .description("charge " + charge.id())
                    .build()).id();
        } catch (DuplicateEntryException already) {
            // journaled before (the reference is unique): keep that one entry
            return already.existingEntryId();
        }
    }

    /** The answer to give after this owner lost the record: the charge's answer if finished, else a conflict. */
    private ApiResponse afterLoss(ChargeRow row) {
        Optional<ChargeRow> current = jdbc.inTransaction(c -> charges.find(c, row.id()));
        if (current.isPresent() && current.get().status().isFinished()) {
            return durable.replayRow(row.scopeKey(), recorded(current.get()));
        }
        return ApiProblems.leaseLost();
    }

    /** An attempt without an answer: count it, hand the record to recovery, or dead-letter the charge. */
    ApiResponse recordFailure(ChargeRow row, OwnerToken owner, PspException error) {
        try {
            return recordFailureInTransaction(row, owner, error);
        } catch (DatabaseException | StoreUnavailableException | LedgerStorageException | LedgerRetryableException e) {
            log.warn("charge {}: the database failed recording a processor attempt ({})", row.id(), e.getMessage());
            return ApiProblems.outcomeUnknown("the processor gave no answer and the database failed recording "
                    + "the attempt; the charge will be completed by recovery", row.id());
        }
    }

    private ApiResponse recordFailureInTransaction(ChargeRow row, OwnerToken owner, PspException error) {
        boolean unknown = error.outcomeUnknown() || row.recoveryPoint() == RecoveryPoint.PROCESSOR_CALLED;
        RecoveryPoint point = unknown ? RecoveryPoint.PROCESSOR_CALLED : RecoveryPoint.CHARGE_CREATED;
        String message = truncate(error.getClass().getSimpleName() + ": " + error.getMessage());
        log.warn("charge {}: processor attempt failed ({})", row.id(), message);
        try {
            return jdbc.inTransaction(c -> {
                if (!durable.recoveryPoint(c, row.scopeKey(), owner, point.db())) {
                    throw new LostRecord();
                }
                ChargeRow current = charges.lock(c, row.id()).orElseThrow();
                if (current.status().isFinished()) {
                    Jdbc.rollback(c);
                    return durable.replayRow(current.scopeKey(), recorded(current));
                }
                if (current.status() == ChargeStatus.DEAD_LETTERED) {
                    Jdbc.rollback(c);
                    return ApiProblems.deadLettered(current.id());
                }
                int attempts = current.attempts() + 1;
                boolean deadLetter = attempts >= retries.maxAttempts();
                String reason = deadLetter
                        ? "no answer from the processor after " + attempts + " attempts; last: " + message
                        : null;
                Instant now = clock.instant();
                charges.recordFailure(c, current.id(), attempts, message, point,
                        deadLetter ? ChargeStatus.DEAD_LETTERED : ChargeStatus.PENDING, reason, now);
                Duration delay = deadLetter ? DEAD_LETTER_HANDOVER : retries.delayAfter(attempts);
                if (!durable.handOver(c, row.scopeKey(), owner, delay)) {
                    throw new LostRecord();
                }
                if (deadLetter) {
                    log.error("charge {} dead-lettered: {}", current.id(), reason);
                    return ApiProblems.deadLettered(current.id());
                }
                Duration retryAfter = delay.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : delay;
                return ApiProblems.processorUnavailable(current.id(), unknown, retryAfter);
            });
        } catch (LostRecord lost) {
            return afterLoss(row);
        }
    }

    /** The answer recorded on a finished charge row. */
    static ApiResponse recorded(ChargeRow row) {
        ApiResponse response = row.response();
        if (response == null) {
            throw new IllegalStateException("finished charge " + row.id() + " has no recorded answer");
        }
        return response;
    }

    private static String truncate(String s) {
        return s.length() > 500 ? s.substring(0, 500) : s;
    }
}
