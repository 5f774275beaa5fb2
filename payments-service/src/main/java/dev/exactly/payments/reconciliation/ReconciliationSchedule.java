package dev.exactly.payments.reconciliation;

import dev.exactly.payments.tasks.Periodic;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs {@link Reconciliation} on a schedule over the last {@code lookback}, and keeps what the last run
 * found: the open mismatches of each kind (published as a meter), or nothing yet.
 */
public final class ReconciliationSchedule implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(ReconciliationSchedule.class);

    private final Reconciliation reconciliation;
    private final InstantSource clock;
    private final Settings settings;
    private final AtomicReference<@Nullable ReconciliationReport> last = new AtomicReference<>();
    private @Nullable Periodic running;

    public ReconciliationSchedule(Reconciliation reconciliation, InstantSource clock, Settings settings) {
        this.reconciliation = reconciliation;
        this.clock = clock;
        this.settings = settings;
    }

    /**
     * Whether and how often this instance reconciles.
     *
     * @param enabled  whether this instance reconciles on a schedule
     * @param interval pause between two runs
     * @param lookback the window of each run, ending now
     */
    public record Settings(boolean enabled, Duration interval, Duration lookback) {
        public Settings {
            if (interval.toMillis() < 1 || lookback.toMillis() < 1) {
                throw new IllegalArgumentException("reconciliation interval and lookback must be positive");
            }
        }
    }

    /** One run now; its report becomes the last one. */
    public ReconciliationReport runOnce() {
        var now = clock.instant();
        ReconciliationReport report = reconciliation.reconcile(now.minus(settings.lookback()), now);
        last.set(report);
        if (!report.mismatches().isEmpty()) {
            log.warn(
                    "reconciliation of the last {}: {} mismatches {}",
                    settings.lookback(),
                    report.mismatches().size(),
                    report.countsByKind());
        }
        return report;
    }

    /** The open mismatches of a kind, as of the last run (0 before the first). */
    public int open(Mismatch.Kind kind) {
        ReconciliationReport report = last.get();
        return report == null ? 0 : report.countsByKind().getOrDefault(kind, 0);
    }

    /** The open mismatches per kind, as of the last run. */
    public Map<Mismatch.Kind, Integer> open() {
        ReconciliationReport report = last.get();
        return report == null ? Map.of() : report.countsByKind();
    }

    @Override
    public synchronized void start() {
        if (running == null && settings.enabled()) {
            running =
                    Periodic.start("payments-reconciliation", settings.interval(), settings.interval(), this::runOnce);
        }
    }

    @Override
    public synchronized void stop() {
        Periodic p = running;
        running = null;
        if (p != null) {
            p.close();
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return running != null;
    }
}
