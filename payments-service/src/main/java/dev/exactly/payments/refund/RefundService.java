package dev.exactly.payments.refund;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseStart;
import dev.exactly.ledger.Account;
import dev.exactly.ledger.BalanceFloorException;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.EntryRequest;
import dev.exactly.ledger.Ledger;
import dev.exactly.ledger.Money;
import dev.exactly.payments.charge.ChargeRepository;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.payments.charge.ChargeStatus;
import dev.exactly.payments.charge.Ids;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.json.Parsed;
import dev.exactly.payments.keys.IdempotentRoutes;
import dev.exactly.payments.keys.ReplayCounter;
import dev.exactly.payments.ledger.TenantAccounts;
import dev.exactly.payments.webhooks.EventType;
import dev.exactly.payments.webhooks.Outbox;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Refunding part or all of a charge: one transaction that begins the durable record, locks the charge row,
 * checks that the refunds stay within the charge (under that lock, so concurrent refunds are decided one
 * at a time), journals the refund (a new entry linked to the charge's: debit the customer, credit clearing;
 * the customer's floor of zero is a second guard), records the refund row with the answer
 * {@link RefundAnswers} renders, and finishes the record. Refusals (unknown charge, not refundable, too
 * much) are outcomes too: recorded and replayed. A refund of a charge still pending is not recorded.
 */
public final class RefundService {
    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final RefundRepository refunds;
    private final AtomicPhases phases;
    private final IdempotentRoutes routes;
    private final ReplayCounter replays;
    private final Ledger ledger;
    private final TenantAccounts accounts;
    private final RefundAnswers answers;
    private final Ids ids;
    private final InstantSource clock;
    private final Outbox outbox;

    /**
     * @param answers renders the answers refund decisions record
     * @param outbox  takes the {@code refund.succeeded} event in the refund's transaction
     */
    public RefundService(Jdbc jdbc, ChargeRepository charges, RefundRepository refunds, AtomicPhases phases,
            IdempotentRoutes routes, ReplayCounter replays, Ledger ledger, TenantAccounts accounts,
            RefundAnswers answers, Ids ids, InstantSource clock, Outbox outbox) {
        this.jdbc = jdbc;
        this.charges = charges;
        this.refunds = refunds;
        this.phases = phases;
        this.routes = routes;
        this.replays = replays;
        this.ledger = ledger;
        this.accounts = accounts;
        this.answers = answers;
        this.ids = ids;
        this.clock = clock;
        this.outbox = outbox;
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
        // accounts are opened outside the transaction (idempotent), so the transaction holds one connection
        Optional<ChargeRow> peek = jdbc.inTransaction(c -> charges.findForTenant(c, request.charge(), tenant));
        RefundAccounts refundAccounts = peek.filter(ch -> ch.status() == ChargeStatus.SUCCEEDED)
                .map(ch -> new RefundAccounts(
                        accounts.customer(tenant, ch.customer(), Currency.of(ch.currency())),
                        accounts.clearing(tenant, Currency.of(ch.currency()))))
                .orElse(null);
        return jdbc.inTransaction(c -> switch (phases.begin(c, idempotency)) {
            case PhaseStart.Owned owned -> decide(c, owned.phase(), idempotency, tenant, request, refundAccounts);
            case PhaseStart.Replay replay -> {
                Jdbc.rollback(c);
                replays.count(idempotency.key());
                yield new RefundResult.Replayed(replay.response());
            }
            case PhaseStart.InFlight inFlight -> {
                Jdbc.rollback(c);
                yield new RefundResult.InFlight(inFlight.retryAfter());
            }
            case PhaseStart.KeyReused reused -> {
                Jdbc.rollback(c);
                yield new RefundResult.KeyReused();
            }
            case PhaseStart.DeadLettered dead ->
                    throw new IllegalStateException("a refund is decided in one transaction: never retried later");
        });
    }

    /** The accounts a refund moves money between (the customer's is debited). */
    private record RefundAccounts(Account customer, Account clearing) {}

    /** The refund's decision, taken under the charge's row lock. */
    private sealed interface Decision {
        /** An outcome: recorded on the refund row and the durable record, replayed to every retry. */
        record Recorded(String refundId, StoredResponse answer, @Nullable String currency,
                @Nullable String failureCode, @Nullable Long entryId) implements Decision {}

        /** The charge is not settled: nothing is recorded. */
        record Pending(String chargeId) implements Decision {}
    }

    private RefundResult decide(Connection c, Phase phase, IdempotencyRequest idempotency, String tenant,
            RefundRequest request, @Nullable RefundAccounts refundAccounts) {
        Optional<RefundRepository.RefundRow> existing = refunds.findByScope(c, idempotency.key());
        if (existing.isPresent()) {
            Jdbc.rollback(c);
            if (!existing.get().fingerprint().equals(idempotency.fingerprint())) {
                return new RefundResult.KeyReused();
            }
            replays.count(idempotency.key());
            return new RefundResult.Replayed(existing.get().answer());
        }
        Decision.Recorded decision;
        switch (decide(c, tenant, request, refundAccounts)) {
            case Decision.Pending pending -> {
                Jdbc.rollback(c);
                return new RefundResult.ChargePending(pending.chargeId());
            }
            case Decision.Recorded recorded -> decision = recorded;
        }
        refunds.insert(c, new RefundRepository.RefundRow(decision.refundId(), tenant, idempotency.key(),
                idempotency.fingerprint(), request.charge(), request.amount(), decision.currency(),
                decision.entryId() == null ? "refused" : "succeeded", decision.failureCode(), decision.entryId(),
                decision.answer(), clock.instant()));
        RecordStatus status = decision.entryId() == null ? RecordStatus.FAILED : RecordStatus.COMPLETED;
        if (!phases.finish(c, phase, status, decision.answer())) {
            Jdbc.rollback(c);
            return new RefundResult.LeaseLost();
        }
        if (decision.entryId() != null) {
            // the refund as its answer shows it, committed with the refund
            outbox.record(c, tenant, EventType.REFUND_SUCCEEDED, decision.refundId(),
                    new String(decision.answer().body(), StandardCharsets.UTF_8));
        }
        return new RefundResult.Finished(decision.answer());
    }

    private Decision decide(Connection c, String tenant, RefundRequest request, @Nullable RefundAccounts refundAccounts) {
        String refundId = ids.refund();
        ChargeRow charge = charges.lockForTenant(c, request.charge(), tenant).orElse(null);
        if (charge == null) {
            return new Decision.Recorded(refundId, answers.chargeMissing(), null, "resource_missing", null);
        }
        switch (charge.status()) {
            case PENDING, DEAD_LETTERED -> {
                return new Decision.Pending(charge.id());
            }
            case FAILED -> {
                return new Decision.Recorded(refundId, answers.notRefundable(charge.id(), charge.status()),
                        charge.currency(), "charge_not_refundable", null);
            }
            case SUCCEEDED -> {
                // decided below
            }
        }
        long refundable = charge.amount() - charge.amountRefunded();
        if (request.amount() > refundable) {
            return new Decision.Recorded(refundId, answers.exceedsCharge(charge.id(), request.amount(), refundable),
                    charge.currency(), "refund_exceeds_charge", null);
        }
        Long chargeEntry = charge.ledgerEntryId();
        if (refundAccounts == null || chargeEntry == null) {
            // the charge succeeded after the peek: a retry sees it settled
            return new Decision.Pending(charge.id());
        }
        Instant now = clock.instant();
        Money money = Money.of(request.amount(), Currency.of(charge.currency()));
        long entryId;
        try {
            entryId = ledger.post(c, EntryRequest.refundOf(chargeEntry)
                    .debit(refundAccounts.customer().id(), money)
                    .credit(refundAccounts.clearing().id(), money)
                    .externalRef("refund:" + refundId)
                    .description("refund " + refundId + " of charge " + charge.id())
                    .build()).id();
        } catch (BalanceFloorException floor) {
            throw new IllegalStateException("customer balance below the refunds of one charge", floor);
        }
        if (!charges.addRefund(c, charge.id(), request.amount(), now)) {
            throw new IllegalStateException("refund of " + charge.id() + " exceeded the charge under its row lock");
        }
        StoredResponse answer = answers.refunded(new Refund(refundId, charge.id(), request.amount(), charge.currency(), now));
        return new Decision.Recorded(refundId, answer, charge.currency(), null, entryId);
    }
}
