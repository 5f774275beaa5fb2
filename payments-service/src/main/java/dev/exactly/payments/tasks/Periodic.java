package dev.exactly.payments.tasks;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task run on a daemon thread of its own, with a fixed pause between the end of one run and the start of
 * the next. A run that throws is logged and the next one runs on time: a database or processor outage, or an
 * {@link Error} such as running out of memory, never stops the schedule.
 */
public final class Periodic implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Periodic.class);

    private final ScheduledExecutorService scheduler;

    private Periodic(ScheduledExecutorService scheduler) {
        this.scheduler = scheduler;
    }

    /**
     * Starts running {@code task}.
     *
     * @param name         the thread's name, and the task's in the log
     * @param initialDelay pause before the first run
     * @param pause        pause between the end of a run and the next
     */
    // a run catches everything it can throw, so the schedule's future never fails; close() shuts the executor down
    @SuppressWarnings("FutureReturnValueIgnored")
    public static Periodic start(String name, Duration initialDelay, Duration pause, Runnable task) {
        if (pause.toMillis() < 1 || initialDelay.isNegative()) {
            throw new IllegalArgumentException("the pause must be positive and the initial delay not negative");
        }
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        s.scheduleWithFixedDelay(
                () -> {
                    try {
                        task.run();
                    } catch (RuntimeException e) {
                        log.warn("{} failed; next run in {}", name, pause, e);
                    } catch (Error e) {
                        // thrown out of a scheduled run, it would end the schedule for good, without a word: the
                        // webhooks'
                        // deliveries, the expiry of authorizations, reconciliation or the purge would stop until a
                        // restart
                        log.error("{} failed with an error; next run in {}", name, pause, e);
                    }
                },
                initialDelay.toMillis(),
                pause.toMillis(),
                TimeUnit.MILLISECONDS);
        return new Periodic(s);
    }

    /** Stops the schedule: a run in progress is interrupted and waited for (at most 15 s). */
    @Override
    public void close() {
        scheduler.shutdownNow();
        try {
            scheduler.awaitTermination(15, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
