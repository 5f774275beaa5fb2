package dev.exactly.payments.refund;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.ledger.Account;
import dev.exactly.ledger.BalanceFloorException;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.EntryRequest;
import dev.exactly.ledger.Ledger;
import dev.exactly.ledger.Money;
import dev.exactly.payments.charge.ChargeRepository;
import dev.exactly.payments.charge.ChargeRequest;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.payments.charge.ChargeStatus;
import dev.exactly.payments.charge.Ids;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.keys.DurableTier;
import dev.exactly.payments.ledger.TenantAccounts;
import dev.exactly.payments.web.ApiException;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import dev.exactly.psp.PspChargeRequest;
import java.sql.Connection;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * {@code POST /v1/refunds {"charge":"ch_…","amount":500}}: one transaction that claims the durable
 * record, locks the charge row, checks that the refunds stay within the charge (under that lock, so
 * concurrent refunds are decided one at a time), journals the refund (a new entry linked to the charge's:
 * debit the customer, credit clearing; the customer's floor of zero is a second guard), records the refund
 * row with its answer, and finishes the record. Refusals (unknown charge, not refundable, too much) are
 * answers too: recorded and replayed. A refund of a charge still pending is a 409 that is not recorded.
 */
public final class RefundService {
    private static final List<String> MEMBERS = List.of("charge", "amount");

    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final RefundRepository refunds;
    private final DurableTier durable;
    private final Ledger ledger;
    private final TenantAccounts accounts;
    private final Ids ids;
    private final InstantSource clock;

    public RefundService(Jdbc jdbc, ChargeRepository charges, RefundRepository refunds, DurableTier durable,
            Ledger ledger, TenantAccounts accounts, Ids ids, InstantSource clock) {
        this.jdbc = jdbc;
        this.charges = charges;
        this.refunds = refunds;
        this.durable = durable;
        this.ledger = ledger;
        this.accounts = accounts;
        this.ids = ids;
        this.clock = clock;
    }

    /** A validated refund request. */
    record RefundRequest(String charge, long amount) {
        static RefundRequest parse(byte[] body) {
            Json.Fields f = Json.Fields.of(body);
            f.onlyKnown(MEMBERS);
            String charge = f.requiredString("charge", ChargeRequest.ID, "a charge id");
            long amount = f.requiredLong("amount", 1, PspChargeRequest.MAX_AMOUNT);
            if (!f.valid()) {
                throw new ApiException(ApiProblems.validationFailed("the refund request is invalid", f.errors()));
            }
            return new RefundRequest(charge, amount);
        }
    }

    /** Refunds part or all of a charge, or answers as the first request with this key was answered. */
    public ApiResponse create(String tenant, IdempotencyKey key, byte[] body, @Nullable String contentType) {
        RefundRequest request = RefundRequest.parse(body);
        ScopeKey scope = DurableTier.scopeKey(tenant, DurableTier.REFUNDS_ROUTE, key);
        Fingerprint fingerprint = durable.fingerprint(DurableTier.REFUNDS_ROUTE, body, contentType);
        // accounts are opened outside the transaction (idempotent), so the transaction holds one connection
        Optional<ChargeRow> peek = jdbc.inTransaction(c -> charges.findForTenant(c, request.charge(), tenant));
        Account[] refundAccounts = peek.filter(ch -> ch.status() == ChargeStatus.SUCCEEDED)
                .map(ch -> new Account[] {
                    accounts.customer(tenant, ch.customer(), Currency.of(ch.currency())),
                    accounts.clearing(tenant, Currency.of(ch.currency()))})
                .orElse(null);
        return jdbc.inTransaction(c -> {
            ClaimOutcome outcome = durable.claim(c, scope, fingerprint);
            if (!(outcome instanceof ClaimOutcome.Claimed claimed)) {
                Jdbc.rollback(c);
                return durable.answerExisting(outcome, fingerprint);
            }
            Optional<RefundRepository.RefundRow> existing = refunds.findByScope(c, scope);
            if (existing.isPresent()) {
                Jdbc.rollback(c);
                return existing.get().fingerprint().equals(fingerprint)
                        ? durable.replayRow(scope, existing.get().response())
                        : ApiProblems.keyReused();
            }
            Decision decision = decide(c, tenant, request, refundAccounts);
            if (!decision.response().recordable()) {
                Jdbc.rollback(c);
                return decision.response();
            }
            String refundId = decision.refundId();
            refunds.insert(c, new RefundRepository.RefundRow(refundId, tenant, scope, fingerprint, request.charge(),
                    request.amount(), decision.currency(), decision.entryId() == null ? "refused" : "succeeded",
                    decision.failureCode(), decision.entryId(), decision.response(), clock.instant()));
            if (!durable.complete(c, scope, claimed.owner(), decision.response())) {
                Jdbc.rollback(c);
                return ApiProblems.leaseLost();
            }
            return decision.response();
        });
    }

    /** The refund's answer, decided under the charge's row lock. */
    private record Decision(String refundId, ApiResponse response, @Nullable String currency,
            @Nullable String failureCode, @Nullable Long entryId) {}

    private Decision decide(Connection c, String tenant, RefundRequest request, Account @Nullable [] refundAccounts) {
        String refundId = ids.refund();
        ChargeRow charge = charges.lockForTenant(c, request.charge(), tenant).orElse(null);
        if (charge == null) {
            return new Decision(refundId, ApiProblems.notFound("charge"), null, "resource_missing", null);
        }
        switch (charge.status()) {
            case PENDING, DEAD_LETTERED -> {
                return new Decision(refundId, ApiProblems.chargePending(charge.id()), charge.currency(), null, null);
            }
            case FAILED -> {
                return new Decision(refundId, ApiProblems.chargeNotRefundable(charge.id(), "failed"), charge.currency(),
                        "charge_not_refundable", null);
            }
            case SUCCEEDED -> {
                // decided below
            }
        }
        long refundable = charge.amount() - charge.amountRefunded();
        if (request.amount() > refundable) {
            return new Decision(refundId, ApiProblems.refundExceedsCharge(charge.id(), request.amount(), refundable),
                    charge.currency(), "refund_exceeds_charge", null);
        }
        if (refundAccounts == null || charge.ledgerEntryId() == null) {
            // the charge succeeded after the peek: a retry sees it settled
            return new Decision(refundId, ApiProblems.chargePending(charge.id()), charge.currency(), null, null);
        }
        Instant now = clock.instant();
        Money money = Money.of(request.amount(), Currency.of(charge.currency()));
        long entryId;
        try {
            entryId = ledger.post(c, EntryRequest.refundOf(charge.ledgerEntryId())
                    .debit(refundAccounts[0].id(), money)
                    .credit(refundAccounts[1].id(), money)
                    .externalRef("refund:" + refundId)
                    .description("refund " + refundId + " of charge " + charge.id())
                    .build()).id();
        } catch (BalanceFloorException floor) {
            throw new IllegalStateException("customer balance below the refunds of one charge", floor);
        }
        if (!charges.addRefund(c, charge.id(), request.amount(), now)) {
            throw new IllegalStateException("refund of " + charge.id() + " exceeded the charge under its row lock");
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("id", refundId);
        json.put("object", "refund");
        json.put("amount", request.amount());
        json.put("currency", charge.currency());
        json.put("charge", charge.id());
        json.put("status", "succeeded");
        json.put("created", now.getEpochSecond());
        ApiResponse response = ApiResponse.created("/v1/refunds/" + refundId, Json.write(json));
        return new Decision(refundId, response, charge.currency(), null, entryId);
    }
}
