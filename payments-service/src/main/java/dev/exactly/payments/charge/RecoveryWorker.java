package dev.exactly.payments.charge;

import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.idempotency.postgres.PhaseRecovery;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.tasks.Periodic;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Finishes charges (and refunds, through their {@link PhaseKind}) whose owner went away, with the atomic phases' recovery ({@link PhaseRecovery}): each
 * round takes over the records whose lease ran out ({@code FOR UPDATE SKIP LOCKED}, so any number of
 * workers, in this process or other instances, take disjoint sets), each under a fresh owner token and
 * with the last checkpoint its earlier owner committed, and resumes at most {@code parallelism} of them at
 * once, each with its lease kept alive. Resuming a charge ({@link #resume}) is
 * {@link ChargeExecutor#execute} as a resumed charge: ask the processor about the downstream key, re-send
 * the persisted request only if it never arrived, finish the phase. A failed attempt is counted on the
 * record ({@link AtomicPhases#retryLater}), which is handed back after a backoff (exponential, capped,
 * full jitter), and dead-lettered after the last attempt.
 *
 * <p>A record that is not a charge's may be a capture's or a void's: {@link ChargeActions#resume} sends it to
 * the processor again under the same key and finishes it.
 *
 * <p>A charge's record never expires while the charge is open (its first checkpoint is committed with
 * the charge row), so every open charge is found through its record. The worker also purges expired
 * records now and then, in bounded batches, and voids expired authorizations ({@link AuthorizationExpiry}).
 */
public final class RecoveryWorker implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(RecoveryWorker.class);
    private static final int PURGE_BATCH = 1000;

    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final AtomicPhases phases;
    private final ChargeExecutor executor;
    private final AuthorizationExpiry expiry;
    private final Settings settings;
    private final List<PhaseKind> otherKinds;
    private final PhaseRecovery recovery;
    private @Nullable Periodic purger;
    private @Nullable Periodic expirer;

    /**
     * @param policy     lease and keep-alive of the records the worker takes over
     * @param otherKinds the other operations whose records it resumes (refunds, captures and voids), asked
     *                   when no charge has the record's scope
     * @param expiry     voids expired authorizations on the worker's schedule
     */
    public RecoveryWorker(
            Storage storage,
            IdempotencyPolicy policy,
            ChargeExecutor executor,
            Settings settings,
            List<PhaseKind> otherKinds,
            AuthorizationExpiry expiry) {
        this.jdbc = storage.jdbc();
        this.charges = storage.charges();
        this.phases = storage.phases();
        this.executor = executor;
        this.expiry = expiry;
        this.settings = Objects.requireNonNull(settings, "settings");
        this.otherKinds = List.copyOf(otherKinds);
        this.recovery = this.phases.recovery(this::resume, policy);
    }

    /**
     * Whether this instance recovers on a schedule, and how often it purges expired records.
     *
     * @param enabled       whether rounds (and purges) run on a schedule in this instance
     * @param purgeInterval how often expired idempotency records are purged
     */
    public record Settings(boolean enabled, Duration purgeInterval) {
        public Settings {
            if (purgeInterval.toMillis() < 1) {
                throw new IllegalArgumentException("the purge interval must be positive");
            }
        }
    }

    /**
     * One round: takes over the abandoned charges (at most the recovery policy's parallelism) and drives
     * each to an answer, to its next attempt or to the dead letter.
     *
     * @return how many charges were taken over
     */
    public int runOnce() {
        return recovery.runOnce();
    }

    /** How many charges this worker took over since it started. */
    public long recoveredCount() {
        return recovery.resumedCount();
    }

    /**
     * Carries on with a charge whose record recovery took over (or, when no charge has its scope, with the
     * operation of another {@link PhaseKind}); the charge row says where it stands. Pending: phases
     * 2 and 3, asking the processor first. Finished: the record takes the row's answer (the service never
     * leaves that state behind, since row and record finish in one transaction, but rows written before
     * the records kept their phases can).
     */
    private void resume(Phase phase) {
        ChargeRow row =
                jdbc.inTransaction(c -> charges.findByScope(c, phase.key())).orElse(null);
        if (row == null) {
            for (PhaseKind kind : otherKinds) {
                if (kind.resume(phase)) {
                    return;
                }
            }
            throw new IllegalStateException(
                    "no charge or refund for the record " + phase.key() + ": left to an operator");
        }
        switch (row.status()) {
            case PENDING -> {
                log.info(
                        "recovering charge {} from {} (attempts so far {})",
                        row.id(),
                        phase.checkpoint() == null
                                ? "the start"
                                : phase.checkpoint().name(),
                        phase.attempts());
                executor.execute(row, phase, false);
            }
            case SUCCEEDED, FAILED, AUTHORIZED, VOIDED -> finishWithRowAnswer(row, phase);
            case DEAD_LETTERED ->
                throw new IllegalStateException(
                        "charge " + row.id() + " is dead-lettered: an operator retries or resolves it");
        }
    }

    /** The row already has its answer: the record takes it, so retries replay it. */
    private void finishWithRowAnswer(ChargeRow row, Phase phase) {
        StoredResponse answer = Objects.requireNonNull(row.answer(), "a finished charge has its answer");
        RecordStatus status = row.status() == ChargeStatus.FAILED ? RecordStatus.FAILED : RecordStatus.COMPLETED;
        jdbc.inTransaction(c -> phases.finish(c, phase, status, answer));
    }

    private void purge() {
        long purged = phases.store().purgeAllExpired(PURGE_BATCH);
        if (purged > 0) {
            log.info("purged {} expired idempotency records", purged);
        }
    }

    @Override
    public synchronized void start() {
        if (purger != null || !settings.enabled()) {
            return;
        }
        recovery.start();
        purger = Periodic.start("payments-purge", Duration.ZERO, settings.purgeInterval(), this::purge);
        expirer =
                Periodic.start("payments-authorization-expiry", expiry.interval(), expiry.interval(), expiry::runOnce);
    }

    @Override
    public synchronized void stop() {
        Periodic p = purger;
        Periodic e = expirer;
        purger = null;
        expirer = null;
        recovery.close();
        if (p != null) {
            p.close();
        }
        if (e != null) {
            e.close();
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return purger != null;
    }
}
