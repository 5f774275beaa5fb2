package dev.exactly.payments.charge;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseClaim;
import dev.exactly.idempotency.postgres.PhaseStart;
import dev.exactly.idempotency.postgres.PhaseWrite;
import dev.exactly.payments.db.CommitBatcher;
import dev.exactly.payments.db.DatabaseException;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.db.Pipeline;
import dev.exactly.payments.json.Parsed;
import dev.exactly.payments.keys.IdempotentRoutes;
import dev.exactly.payments.keys.ReplayCounter;
import java.sql.Connection;
import java.time.InstantSource;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Creating a charge behind the hot tier: the durable tier's phase 1, then phases 2 and 3 by
 * {@link ChargeExecutor}.
 *
 * <p>Phase 1 is one transaction: begin the durable record ({@link AtomicPhases#begin}, PostgreSQL, unique on
 * the scope) and, for a new key, insert the charge row ({@link ChargeRow#pending}) with the downstream key
 * and the exact processor request, and commit the checkpoint {@code charge_created}. A key without any
 * record, the common case, takes one round trip: the record with its checkpoint
 * ({@link AtomicPhases#beginningNew}), the row and the commit, sent together. Otherwise what beginning finds
 * decides the rest:
 * <ul>
 *   <li>a finished record: its answer, byte for byte (the key reused if the payload differs);</li>
 *   <li>a record in flight: come back later (never a second execution);</li>
 *   <li>owned, and a charge row exists for the scope (an earlier owner died, or the record expired while
 *       the row stayed): the row decides. Finished → its recorded answer; pending → resume it from its
 *       recovery point, asking the processor first; different fingerprint → the key reused;</li>
 *   <li>owned, no row: a new charge.</li>
 * </ul>
 * {@link ChargeExecutor} keeps the record's lease alive while phases 2 and 3 run.
 */
public final class ChargePipeline {
    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final AtomicPhases phases;
    private final IdempotentRoutes routes;
    private final ReplayCounter replays;
    private final ChargeExecutor executor;
    private final Ids ids;
    private final InstantSource clock;
    private final ChargeObserver observer;
    private final @Nullable CommitBatcher batcher;

    /**
     * @param observer told when a charge passes a step ({@link ChargeObserver#NONE} in the service)
     * @param batcher  commits the phase 1 of new charges together, or {@code null}: each alone
     */
    public ChargePipeline(
            Storage storage,
            IdempotentRoutes routes,
            ChargeExecutor executor,
            Ids ids,
            ChargeObserver observer,
            @Nullable CommitBatcher batcher) {
        this.jdbc = storage.jdbc();
        this.charges = storage.charges();
        this.phases = storage.phases();
        this.routes = routes;
        this.replays = storage.replays();
        this.executor = executor;
        this.ids = ids;
        this.clock = storage.clock();
        this.observer = observer;
        this.batcher = batcher;
    }

    /** What phase 1 decided. */
    private sealed interface Begin {
        /** A result without running anything. */
        record Answer(ChargeResult result) implements Begin {}

        /** This request owns the charge. */
        record Run(ChargeRow charge, Phase phase, boolean fresh) implements Begin {}
    }

    /** Creates a charge, or answers as the first request with this key was answered. */
    public ChargeResult create(String tenant, IdempotencyKey key, byte[] body, @Nullable String contentType) {
        ChargeRequest request;
        switch (ChargeRequest.parse(body)) {
            case Parsed.Invalid<ChargeRequest> invalid -> {
                return new ChargeResult.Invalid(invalid.errors());
            }
            case Parsed.Valid<ChargeRequest> valid -> request = valid.value();
        }
        IdempotencyRequest idempotency = routes.request(IdempotentRoutes.CHARGES, tenant, key, body, contentType);
        Begin begin;
        try {
            begin = newChargeTogether(idempotency, tenant, request)
                    .orElseGet(() -> jdbc.inTransaction(c -> newCharge(c, idempotency, tenant, request)));
        } catch (KeyTaken taken) {
            try {
                // the key has a record (in flight, finished, expired) or its scope a charge: the claim decides
                begin = phase1(idempotency, tenant, request, false);
            } catch (KeyTaken scopeTaken) {
                // the scope has a charge row (its record expired and was purged while the row stayed): phase 1
                // again, reading the row first
                begin = phase1(idempotency, tenant, request, true);
            }
        }
        return switch (begin) {
            case Begin.Answer answer -> answer.result();
            case Begin.Run run -> {
                if (run.fresh()) {
                    observer.created(run.charge());
                }
                yield executor.execute(run.charge(), run.phase(), run.fresh());
            }
        };
    }

    /**
     * Phase 1 of a key that has no record and whose scope has no charge, the common case, in one round trip:
     * the claim with its first checkpoint ({@link AtomicPhases#beginningNew}), the charge row, and the
     * commit. A record of the key, or a charge of its scope, fails one of the inserts with a unique
     * violation: nothing commits ({@link KeyTaken}), and phase 1 runs with the claim first.
     */
    private Begin newCharge(Connection c, IdempotencyRequest idempotency, String tenant, ChargeRequest request) {
        NewCharge fresh = newCharge(idempotency, tenant, request);
        fresh.pipeline().commit();
        runTakingKey(fresh.pipeline(), c);
        return fresh.run();
    }

    /**
     * {@link #newCharge(Connection, IdempotencyRequest, String, ChargeRequest)} committed with the phase 1 of
     * other new charges ({@link CommitBatcher}); empty when another charge of the batch failed it: run alone.
     */
    private Optional<Begin> newChargeTogether(IdempotencyRequest idempotency, String tenant, ChargeRequest request) {
        if (batcher == null) {
            return Optional.empty();
        }
        NewCharge fresh = newCharge(idempotency, tenant, request);
        try {
            if (!batcher.commit(fresh.pipeline(), idempotency.key().hash())) {
                return Optional.empty();
            }
        } catch (DatabaseException e) {
            if (e.isUniqueViolation()) {
                throw new KeyTaken();
            }
            throw e;
        }
        return Optional.of(fresh.run());
    }

    /** Phase 1 of a new key, its statements ready to be sent (without the commit). */
    private record NewCharge(
            Pipeline pipeline, Pipeline.Result<Boolean> claimed, ChargeRow created, Phase phase, ScopeKey key) {
        Begin run() {
            if (!claimed.get()) {
                throw new IllegalStateException("the new record of " + key + " was not inserted");
            }
            return new Begin.Run(created, phase, true);
        }
    }

    private NewCharge newCharge(IdempotencyRequest idempotency, String tenant, ChargeRequest request) {
        PhaseClaim claim = phases.beginningNew(idempotency, RecoveryPoint.CHARGE_CREATED.checkpoint());
        ChargeRow created = ChargeRow.pending(
                ids.charge(), tenant, idempotency.key(), idempotency.fingerprint(), request, clock.instant());
        Pipeline pipeline = new Pipeline();
        Pipeline.Result<Boolean> claimed = pipeline.add(claim.sql(), claim::bind, claim::applied);
        charges.inserting(pipeline, created);
        return new NewCharge(pipeline, claimed, created, claim.phase(), idempotency.key());
    }

    /** Runs {@code pipeline}; a unique violation (a record of the key, a charge of the scope) is {@link KeyTaken}. */
    private static void runTakingKey(Pipeline pipeline, Connection c) {
        try {
            pipeline.run(c);
        } catch (DatabaseException e) {
            if (e.isUniqueViolation()) {
                throw new KeyTaken();
            }
            throw e;
        }
    }

    /** Phase 1 with the claim first, in one transaction. */
    private Begin phase1(IdempotencyRequest idempotency, String tenant, ChargeRequest request, boolean scopeTaken) {
        return jdbc.inTransaction(c -> switch (phases.begin(c, idempotency)) {
            case PhaseStart.Owned owned -> own(c, owned.phase(), idempotency, tenant, request, scopeTaken);
            case PhaseStart.Replay replay -> {
                replays.count(idempotency.key());
                yield answer(c, new ChargeResult.Replayed(replay.response()));
            }
            case PhaseStart.InFlight inFlight -> answer(c, new ChargeResult.InFlight(inFlight.retryAfter()));
            case PhaseStart.KeyReused reused -> answer(c, new ChargeResult.KeyReused());
            case PhaseStart.DeadLettered dead ->
                answer(
                        c,
                        new ChargeResult.DeadLettered(charges.findByScope(c, idempotency.key())
                                .orElseThrow()
                                .id()));
        });
    }

    /**
     * Thrown out of phase 1's transaction when a new record's insert met a record of its key, or a new
     * charge's insert a charge of its scope: roll back.
     */
    private static final class KeyTaken extends RuntimeException {
        KeyTaken() {
            super(null, null, false, false);
        }
    }

    /**
     * The request owns the key: create its charge, or resume the scope's charge. A first owner sends the
     * insert, the first recovery point and the commit at once (one round trip after the claim); should the
     * scope have a charge row already (its record expired and was purged while the row stayed), the insert
     * fails, everything rolls back, and phase 1 runs again with {@code scopeTaken}, reading the row first, as
     * an owner that took over does.
     */
    private Begin own(
            Connection c,
            Phase phase,
            IdempotencyRequest idempotency,
            String tenant,
            ChargeRequest request,
            boolean scopeTaken) {
        if (!phase.takeover() && !scopeTaken) {
            return createAndCommit(c, phase, idempotency, tenant, request);
        }
        Optional<ChargeRow> found = charges.findByScope(c, idempotency.key());
        if (found.isEmpty()) {
            return create(c, phase, idempotency, tenant, request)
                    .orElseThrow(() -> new IllegalStateException(
                            "a charge of scope " + idempotency.key() + " appeared under its record's lock"));
        }
        ChargeRow existing = found.get();
        if (!existing.fingerprint().equals(idempotency.fingerprint())) {
            return answer(c, new ChargeResult.KeyReused());
        }
        return switch (existing.status()) {
            case SUCCEEDED, FAILED, AUTHORIZED, VOIDED -> answer(c, executor.replay(existing));
            case DEAD_LETTERED -> answer(c, new ChargeResult.DeadLettered(existing.id()));
            case PENDING -> {
                phases.checkpoint(c, phase, existing.recoveryPoint().checkpoint());
                yield new Begin.Run(existing, phase, false);
            }
        };
    }

    /**
     * A new charge row and the first recovery point, committed in the same round trip: the insert fails
     * when the scope has a charge ({@link KeyTaken}), the checkpoint is fenced by the owner token that the
     * claim just set in this transaction.
     */
    private Begin createAndCommit(
            Connection c, Phase phase, IdempotencyRequest idempotency, String tenant, ChargeRequest request) {
        ChargeRow created = ChargeRow.pending(
                ids.charge(), tenant, idempotency.key(), idempotency.fingerprint(), request, clock.instant());
        Pipeline pipeline = new Pipeline();
        charges.inserting(pipeline, created);
        PhaseWrite checkpoint = phases.checkpointing(phase, RecoveryPoint.CHARGE_CREATED.checkpoint());
        Pipeline.Result<Boolean> checkpointed = pipeline.add(checkpoint.sql(), checkpoint::bind, checkpoint::applied);
        pipeline.commit();
        runTakingKey(pipeline, c);
        if (!checkpointed.get()) {
            throw new IllegalStateException("the claim of " + idempotency.key()
                    + " did not hold for its first checkpoint in the same transaction");
        }
        return new Begin.Run(created, phase, true);
    }

    /** A new charge row, unless the scope has one: phase 1 then ends at the first recovery point. */
    private Optional<Begin> create(
            Connection c, Phase phase, IdempotencyRequest idempotency, String tenant, ChargeRequest request) {
        ChargeRow created = ChargeRow.pending(
                ids.charge(), tenant, idempotency.key(), idempotency.fingerprint(), request, clock.instant());
        if (!charges.insertIfAbsent(c, created)) {
            return Optional.empty();
        }
        phases.checkpoint(c, phase, RecoveryPoint.CHARGE_CREATED.checkpoint());
        return Optional.of(new Begin.Run(created, phase, true));
    }

    /** Ends phase 1 without running anything: nothing it wrote is kept. */
    private static Begin answer(Connection c, ChargeResult result) {
        Jdbc.rollback(c);
        return new Begin.Answer(result);
    }
}
