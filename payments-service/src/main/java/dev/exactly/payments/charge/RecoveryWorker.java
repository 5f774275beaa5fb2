package dev.exactly.payments.charge;

import dev.exactly.idempotency.LeaseKeeper;
import dev.exactly.idempotency.postgres.Phase;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.keys.DurableTier;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Finishes charges whose owner went away. Each sweep, in one short transaction, locks the durable
 * records of pending charges whose lease expired ({@code FOR UPDATE SKIP LOCKED}, so any number of
 * workers, in this process or other instances, take disjoint batches) and takes each over
 * ({@link DurableTier#takeOver}), which gives the worker a fresh owner token. Then, outside any transaction, each charge goes through
 * {@link ChargeExecutor#execute} as a resumed charge: ask the processor about the downstream key,
 * re-send the persisted request only if it never arrived, finish the phase; a failed attempt is counted
 * and the record is handed back after a backoff (exponential, capped, with full jitter so that charges a
 * processor outage left pending are not all retried at once), and the charge is dead-lettered after the
 * last attempt.
 * Pending charges whose record expired altogether (a long outage) are swept the same way. Expired
 * idempotency records are purged in bounded batches now and then.
 *
 * <p>At most {@code parallelism} charges are resumed at once (each holds a database connection while it
 * finishes; the setting must stay below the pool size so that requests keep connections), and every
 * record taken over is kept alive ({@link DurableTier#keepAlive}) from the takeover until its charge is
 * done, while it waits for a thread and then by {@link ChargeExecutor} while it runs: a slow processor
 * call never lets another worker take the record over and call again.
 */
public final class RecoveryWorker implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(RecoveryWorker.class);
    private static final int PURGE_BATCH = 1000;
    private static final ThreadFactory THREADS = Thread.ofVirtual().name("payments-recovery-", 0).factory();

    private final Jdbc jdbc;
    private final ChargeRepository charges;
    private final DurableTier durable;
    private final ChargeExecutor executor;
    private final Settings settings;
    private final int parallelism;
    private final InstantSource clock;
    private final AtomicLong recovered = new AtomicLong();
    private @Nullable ScheduledExecutorService scheduler;
    private volatile Instant nextPurge = Instant.MIN;

    /** @param parallelism charges resumed at once (below the connection pool's size) */
    public RecoveryWorker(Jdbc jdbc, ChargeRepository charges, DurableTier durable, ChargeExecutor executor,
            Settings settings, int parallelism, InstantSource clock) {
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism must be positive");
        }
        this.jdbc = jdbc;
        this.charges = charges;
        this.durable = durable;
        this.executor = executor;
        this.settings = settings;
        this.parallelism = parallelism;
        this.clock = clock;
    }

    /**
     * The worker's schedule.
     *
     * @param enabled       whether it sweeps on a schedule in this instance
     * @param interval      pause between two sweeps
     * @param batchSize     charges taken over per sweep
     * @param purgeInterval how often expired idempotency records are purged
     */
    public record Settings(boolean enabled, Duration interval, int batchSize, Duration purgeInterval) {
        public Settings {
            if (batchSize < 1 || interval.toMillis() < 1 || purgeInterval.toMillis() < 1) {
                throw new IllegalArgumentException("recovery batch size and intervals must be positive");
            }
        }
    }

    /** A charge this worker took over. */
    private record Owned(ChargeRow charge, Phase phase) {}

    /**
     * One sweep: takes over up to a batch of abandoned charges and drives each to an answer (or to its
     * next attempt, or to the dead letter).
     *
     * @return how many charges were taken over
     */
    public int runOnce() {
        List<Owned> owned = new ArrayList<>(jdbc.inTransaction(c -> takeOver(c, charges.lockExpiredLeases(c, settings.batchSize()))));
        if (owned.size() < settings.batchSize()) {
            owned.addAll(jdbc.inTransaction(c -> takeOver(c, charges.lockOrphans(c, settings.batchSize() - owned.size()))));
        }
        if (owned.isEmpty()) {
            return 0;
        }
        // every record taken over is kept alive from now while it waits for a thread; the executor keeps
        // it alive while it runs
        List<LeaseKeeper> waiting = new ArrayList<>();
        try (ExecutorService each = Executors.newFixedThreadPool(parallelism, THREADS)) {
            List<Future<?>> running = new ArrayList<>();
            for (Owned o : owned) {
                LeaseKeeper keeper = durable.keepAlive(o.phase());
                waiting.add(keeper);
                running.add(each.submit(() -> {
                    keeper.close();
                    resume(o);
                }));
            }
            for (Future<?> f : running) {
                try {
                    f.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                } catch (java.util.concurrent.ExecutionException e) {
                    log.warn("recovery of a charge failed", e.getCause());
                }
            }
        } finally {
            waiting.forEach(LeaseKeeper::close);
        }
        recovered.addAndGet(owned.size());
        return owned.size();
    }

    /** How many charges this worker took over since it started. */
    public long recoveredCount() {
        return recovered.get();
    }

    private List<Owned> takeOver(Connection c, List<String> ids) {
        List<Owned> owned = new ArrayList<>();
        for (String id : ids) {
            ChargeRow row = charges.find(c, id).orElse(null);
            if (row == null || row.status() != ChargeStatus.PENDING) {
                continue;
            }
            durable.takeOver(c, row.scopeKey(), row.fingerprint()).ifPresent(phase -> {
                durable.checkpoint(c, phase, row.recoveryPoint().checkpoint());
                owned.add(new Owned(row, phase));
            });
        }
        return owned;
    }

    private void resume(Owned o) {
        log.info("recovering charge {} from {} (attempts so far {})", o.charge().id(), o.charge().recoveryPoint().db(),
                o.charge().attempts().count());
        executor.execute(o.charge(), o.phase(), false);
    }

    private void sweep() {
        try {
            while (runOnce() == settings.batchSize()) {
                // a full batch: there may be more
            }
            Instant now = clock.instant();
            if (!now.isBefore(nextPurge)) {
                nextPurge = now.plus(settings.purgeInterval());
                long purged = durable.purgeExpired(PURGE_BATCH);
                if (purged > 0) {
                    log.info("purged {} expired idempotency records", purged);
                }
            }
        } catch (RuntimeException e) {
            log.warn("recovery sweep failed; next sweep in {}", settings.interval(), e);
        }
    }

    @Override
    public synchronized void start() {
        if (scheduler != null || !settings.enabled()) {
            return;
        }
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "payments-recovery");
            t.setDaemon(true);
            return t;
        });
        Duration interval = settings.interval();
        s.scheduleWithFixedDelay(this::sweep, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        scheduler = s;
    }

    @Override
    public synchronized void stop() {
        ScheduledExecutorService s = scheduler;
        scheduler = null;
        if (s != null) {
            s.shutdownNow();
            try {
                s.awaitTermination(15, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return scheduler != null;
    }
}
