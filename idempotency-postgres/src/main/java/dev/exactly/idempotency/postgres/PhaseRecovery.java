package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.LeaseKeeper;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Resumes phases whose owner went away. Each round takes over at most
 * {@link RecoveryPolicy#parallelism()} phases whose lease ran out (one statement, {@code FOR UPDATE SKIP
 * LOCKED}, each under a fresh owner token) and resumes them at once, each on a virtual thread with its
 * lease kept alive, through the application's {@link PhaseResumer}; a round that took a full batch is
 * followed by another at once. A resumer that throws (an {@link Error} too) counts as a failed attempt
 * ({@link AtomicPhases#retryLater}). Nothing waits for a thread while it holds a lease, and never more
 * than {@code parallelism} connections are used for resuming at once by this worker.
 *
 * <p>{@link #start()} runs rounds every {@link RecoveryPolicy#interval()} on a daemon thread of its own;
 * {@link #close()} stops it; a round that fails (the database unavailable, an {@link Error}) is followed by the
 * next as scheduled. Several workers, in this process or others, share the work safely.
 */
public final class PhaseRecovery implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PhaseRecovery.class.getName());

    private final AtomicPhases phases;
    private final PhaseResumer resumer;
    private final IdempotencyPolicy policy;
    private final AtomicLong resumed = new AtomicLong();
    private @Nullable ScheduledExecutorService scheduler;

    PhaseRecovery(AtomicPhases phases, PhaseResumer resumer, IdempotencyPolicy policy) {
        this.phases = Objects.requireNonNull(phases, "phases");
        this.resumer = Objects.requireNonNull(resumer, "resumer");
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    /**
     * One round: takes over abandoned phases and resumes them; returns when they all returned.
     *
     * @return how many phases were taken over
     */
    public int runOnce() {
        List<Phase> taken = phases.takeOverExpired(phases.recoveryPolicy().parallelism(), policy);
        if (taken.isEmpty()) {
            return 0;
        }
        try (ExecutorService each = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Phase phase : taken) {
                each.execute(() -> resume(phase));
            }
        }
        resumed.addAndGet(taken.size());
        return taken.size();
    }

    /** How many phases this worker took over since it was built. */
    public long resumedCount() {
        return resumed.get();
    }

    private void resume(Phase phase) {
        try (LeaseKeeper alive = phases.keepAlive(phase)) {
            resumer.resume(phase);
        } catch (Exception | Error e) {
            // an Error too (a resumer that recurses without end, a class that does not link): left to the thread's
            // future, it would leave the phase to be taken over again and again without an attempt counted
            try {
                phases.store().withOwnConnection("retry later", c -> phases.retryLater(c, phase, e.toString()));
            } catch (RuntimeException unavailable) {
                // the lease runs out and a later round tries again
            }
        }
    }

    private void round() {
        try {
            while (runOnce() == phases.recoveryPolicy().parallelism()) {
                // a full batch: there may be more
            }
        } catch (RuntimeException e) {
            // the database is unavailable: the next round tries again
        } catch (Error e) {
            // thrown out of a scheduled round, it would end the schedule for good, without a word
            LOG.log(System.Logger.Level.ERROR, "phase recovery round failed; the next round runs as scheduled", e);
        }
    }

    /** Runs rounds every interval until {@link #close()}. */
    // a round catches everything it can throw, so the schedule's future never fails; close() shuts the executor down
    @SuppressWarnings("FutureReturnValueIgnored")
    public synchronized void start() {
        if (scheduler != null) {
            return;
        }
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "exactly-phase-recovery");
            t.setDaemon(true);
            return t;
        });
        long interval = phases.recoveryPolicy().interval().toMillis();
        s.scheduleWithFixedDelay(this::round, interval, interval, TimeUnit.MILLISECONDS);
        scheduler = s;
    }

    public synchronized boolean isRunning() {
        return scheduler != null;
    }

    /** Stops the rounds; a round in progress finishes (bounded wait of 15 s). */
    @Override
    public synchronized void close() {
        ScheduledExecutorService s = scheduler;
        scheduler = null;
        if (s != null) {
            s.shutdown();
            try {
                if (!s.awaitTermination(15, TimeUnit.SECONDS)) {
                    s.shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                s.shutdownNow();
            }
        }
    }
}
