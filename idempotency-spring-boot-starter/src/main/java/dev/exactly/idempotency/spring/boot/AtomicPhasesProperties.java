package dev.exactly.idempotency.spring.boot;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the transactional API ({@code exactly.idempotency.phases.*}): {@link TransactionalPhases}
 * and the recovery of abandoned phases.
 */
@ConfigurationProperties(AtomicPhasesProperties.PREFIX)
public class AtomicPhasesProperties {
    public static final String PREFIX = "exactly.idempotency.phases";

    /**
     * Whether to configure AtomicPhases and TransactionalPhases on the application's DataSource (the
     * default with store=postgres; set it to use them beside a Redis or in-memory hot tier).
     */
    private boolean enabled;

    /** Recovery of phases whose owner went away (runs when the application defines a PhaseResumer bean). */
    private final Recovery recovery = new Recovery();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Recovery getRecovery() {
        return recovery;
    }

    /** Recovery's attempts, backoff and concurrency. */
    public static class Recovery {
        /** Failed attempts after which a phase is dead-lettered (an operator takes it over). */
        private int maxAttempts = 5;
        /** Cap of the first backoff, doubling per attempt (full jitter). */
        private Duration firstDelay = Duration.ofSeconds(1);
        /** Cap of every backoff. */
        private Duration maxDelay = Duration.ofSeconds(60);
        /** Phases resumed at once; keep it below the DataSource's pool size. */
        private int parallelism = 4;
        /** Pause between two recovery rounds. */
        private Duration interval = Duration.ofSeconds(1);

        public int getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Duration getFirstDelay() {
            return firstDelay;
        }

        public void setFirstDelay(Duration firstDelay) {
            this.firstDelay = firstDelay;
        }

        public Duration getMaxDelay() {
            return maxDelay;
        }

        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        public int getParallelism() {
            return parallelism;
        }

        public void setParallelism(int parallelism) {
            this.parallelism = parallelism;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }
}
