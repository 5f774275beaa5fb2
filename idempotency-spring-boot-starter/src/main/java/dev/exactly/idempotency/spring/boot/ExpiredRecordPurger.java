package dev.exactly.idempotency.spring.boot;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntToLongFunction;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;

/**
 * Deletes expired records of the PostgreSQL store on a schedule: every {@code interval}, batches of at most
 * {@code batchSize} rows (each one short transaction that skips rows another purger or a claim holds, so
 * several instances may purge at once) until a batch comes back short. Expired records are already
 * invisible to every request; the purge only gives their space back. A run that fails (the database is
 * down, or an {@link Error} such as running out of memory) is logged and counted, and the next run tries again.
 *
 * <p>Runs on one daemon thread of its own, started and stopped with the application context. Meters:
 * {@code exactly.idempotency.purge.rows} and {@code exactly.idempotency.purge.failures}
 * ({@link IdempotencyMetricsAutoConfiguration}).
 */
final class ExpiredRecordPurger implements SmartLifecycle {
    private static final Log log = LogFactory.getLog(ExpiredRecordPurger.class);

    private final IntToLongFunction purgeAll;
    private final Duration interval;
    private final int batchSize;
    private final AtomicLong purged = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong runs = new AtomicLong();
    private @Nullable ScheduledExecutorService scheduler;

    /**
     * @param purgeAll  deletes every expired record in batches of its argument, returning how many it deleted
     * @param interval  the pause between two runs; the first run starts one interval after the start
     * @param batchSize the most rows one statement deletes
     */
    ExpiredRecordPurger(IntToLongFunction purgeAll, Duration interval, int batchSize) {
        this.purgeAll = Objects.requireNonNull(purgeAll, "purgeAll");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive: " + interval);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
        }
        this.interval = interval;
        this.batchSize = batchSize;
    }

    /** One run: purges what has expired; a failure is logged and counted, never thrown. */
    void purgeOnce() {
        try {
            long deleted = purgeAll.applyAsLong(batchSize);
            purged.addAndGet(deleted);
            if (deleted > 0 && log.isDebugEnabled()) {
                log.debug("Purged " + deleted + " expired idempotency records");
            }
        } catch (RuntimeException e) {
            failures.incrementAndGet();
            log.warn("Could not purge expired idempotency records (the next run in " + PropertiesReader.format(interval)
                    + " tries again): " + String.valueOf(e.getMessage()).replaceAll("\\s*[\\r\\n]+\\s*", " "));
        } catch (Error e) {
            // thrown out of a scheduled run, it would end the schedule for good, without a word
            failures.incrementAndGet();
            log.error(
                    "Purging expired idempotency records failed (the next run in " + PropertiesReader.format(interval)
                            + " tries again)",
                    e);
        } finally {
            runs.incrementAndGet();
        }
    }

    /** Rows deleted since the start. */
    long purged() {
        return purged.get();
    }

    /** Runs that failed since the start. */
    long failures() {
        return failures.get();
    }

    /** Runs finished (purged or failed) since the start. */
    long runs() {
        return runs.get();
    }

    @Override
    // a round catches everything it can throw, so the schedule's future never fails; stop() shuts the executor down
    @SuppressWarnings("FutureReturnValueIgnored")
    public synchronized void start() {
        if (scheduler != null) {
            return;
        }
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "exactly-idempotency-purge");
            thread.setDaemon(true);
            return thread;
        });
        long millis = interval.toMillis();
        executor.scheduleWithFixedDelay(this::purgeOnce, millis, millis, TimeUnit.MILLISECONDS);
        scheduler = executor;
    }

    @Override
    public synchronized void stop() {
        ScheduledExecutorService executor = scheduler;
        if (executor != null) {
            executor.shutdownNow();
            scheduler = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return scheduler != null;
    }

    @Override
    public String toString() {
        return "ExpiredRecordPurger[every " + PropertiesReader.format(interval) + ", batches of " + batchSize + "]";
    }
}
