package dev.exactly.payments.charge;

import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.psp.PspCharge;
import dev.exactly.psp.PspClient;
import dev.exactly.psp.PspException;
import java.sql.Connection;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Reading charges, and the operator's actions on stuck and dead-lettered ones. An action owns the
 * durable record like any other finisher: it takes the record over (so it never races the worker or a
 * retry), then uses the same phases as everyone else.
 */
public final class ChargeOperations {
    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final AtomicPhases phases;
    private final IdempotencyPolicy policy;
    private final ChargeExecutor executor;
    private final PspClient psp;
    private final InstantSource clock;

    /** @param policy lease and keep-alive of the operator's ownership of a record */
    public ChargeOperations(Storage storage, IdempotencyPolicy policy, ChargeExecutor executor, PspClient psp) {
        this.jdbc = storage.jdbc();
        this.charges = storage.charges();
        this.phases = storage.phases();
        this.policy = policy;
        this.executor = executor;
        this.psp = psp;
        this.clock = storage.clock();
    }

    /** The operator's two lists. */
    public enum Queue {
        /** Pending charges recovery is working on or should pick up. */
        STUCK,
        /** Charges recovery gave up on. */
        DEAD_LETTERED
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

    /** The charges of one of the operator's lists, with the lease of their durable record. */
    public List<ChargeRepository.WithLease> list(Queue queue, int limit) {
        return jdbc.inTransaction(c -> switch (queue) {
            case STUCK -> charges.stuck(c, limit);
            case DEAD_LETTERED -> charges.deadLettered(c, limit);
        });
    }

    /**
     * Tries a stuck or dead-lettered charge again now: its attempts start over, and it is resumed (the
     * processor is asked about the downstream key first).
     */
    public OperatorResult retry(String chargeId) {
        Optional<ChargeRow> open = jdbc.inTransaction(c -> charges.find(c, chargeId));
        if (open.isEmpty() || open.get().status().isFinished()) {
            return refusal(open);
        }
        ChargeRow row = open.get();
        Phase phase = jdbc.inTransaction(c -> {
            Phase taken = takeOver(c, row);
            if (taken != null) {
                charges.reopen(c, row.id(), "retried by operator", clock.instant());
            }
            return taken;
        });
        if (phase == null) {
            return new OperatorResult.Busy();
        }
        ChargeRow reopened = jdbc.inTransaction(c -> charges.find(c, chargeId)).orElseThrow();
        return done(chargeId, executor.execute(reopened, phase, false));
    }

    /**
     * Settles a stuck or dead-lettered charge by hand. When the processor can be asked and its record
     * contradicts the outcome, the action is refused: the processor's word about money wins.
     */
    public OperatorResult resolve(String chargeId, boolean succeeded, String reason) {
        Optional<ChargeRow> open = jdbc.inTransaction(c -> charges.find(c, chargeId));
        if (open.isEmpty() || open.get().status().isFinished()) {
            return refusal(open);
        }
        ChargeRow row = open.get();
        Optional<PspCharge> atProcessor;
        try {
            atProcessor = psp.findByIdempotencyKey(row.downstreamKey());
        } catch (PspException unreachable) {
            atProcessor = Optional.empty(); // the operator's word is all there is
        }
        if (atProcessor.isPresent() && atProcessor.get().captured() != succeeded) {
            return new OperatorResult.ProcessorDisagrees(
                    atProcessor.get().status().wireName(), atProcessor.get().captured());
        }
        Phase phase = jdbc.inTransaction(c -> takeOver(c, row));
        if (phase == null) {
            return new OperatorResult.Busy();
        }
        String note = "resolved by operator: " + reason;
        String processorId = atProcessor.map(PspCharge::id).orElse(null);
        ChargeOutcome outcome = succeeded
                ? new ChargeOutcome.Captured(processorId, note)
                : new ChargeOutcome.FailedByOperator(processorId, reason, note);
        return done(chargeId, executor.finish(row, phase, outcome));
    }

    private static OperatorResult refusal(Optional<ChargeRow> row) {
        return row.<OperatorResult>map(r -> new OperatorResult.AlreadyFinished(r.status()))
                .orElseGet(OperatorResult.NotFound::new);
    }

    /**
     * Takes the charge's record over for the operator ({@link AtomicPhases#takeOver}: a dead letter, or a
     * record whose lease ran out; its attempts start over), or {@code null} (rolled back) when a live owner
     * holds it.
     */
    private @Nullable Phase takeOver(Connection c, ChargeRow row) {
        Optional<Phase> taken = phases.takeOver(c, row.scopeKey(), policy);
        if (taken.isEmpty()) {
            Jdbc.rollback(c);
            return null;
        }
        phases.checkpoint(c, taken.get(), row.recoveryPoint().checkpoint());
        return taken.get();
    }

    private OperatorResult done(String chargeId, ChargeResult answer) {
        ChargeRow after = jdbc.inTransaction(c -> charges.find(c, chargeId)).orElseThrow();
        return new OperatorResult.Done(answer, after);
    }
}
