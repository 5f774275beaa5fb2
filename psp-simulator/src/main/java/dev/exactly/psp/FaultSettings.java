package dev.exactly.psp;

import dev.exactly.psp.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The faults of a run: applied at random to every request of every operation (charge, capture, void,
 * refund; decline rules to charges only), drawn from one {@link java.util.Random} seeded with
 * {@link #seed()}, so a sequential run is reproducible, on top of any per-request {@link Fault}s. Set at start in {@link PspConfig}, replaced at runtime with
 * {@link PspSimulator#setFaults} or {@code POST /v1/faults}. Immutable; build with {@link #none()},
 * {@link #custom()} or {@link #from}.
 *
 * @param latency                 fixed delay added to every request of an operation
 * @param latencyJitter           extra delay drawn uniformly from [0, jitter]
 * @param errorRate               probability of a 5xx before anything is recorded
 * @param errorStatus             the status of those errors (5xx)
 * @param timeoutRate             probability of a hang before anything is recorded (then 504)
 * @param timeoutAfterCaptureRate probability of a hang after the operation is committed (then 504)
 * @param dropResponseRate        probability that the operation is committed and the response dropped
 * @param timeoutHold             how long the random timeouts hang
 * @param declines                decline rules, first match wins (checked before {@link DeclineRule#TEST_CARDS})
 * @param seed                    seed of the random draws; setting the faults restarts the sequence
 */
public record FaultSettings(
        Duration latency,
        Duration latencyJitter,
        double errorRate,
        int errorStatus,
        double timeoutRate,
        double timeoutAfterCaptureRate,
        double dropResponseRate,
        Duration timeoutHold,
        List<DeclineRule> declines,
        long seed) {

    /** The default seed. */
    public static final long DEFAULT_SEED = 42;

    private static final FaultSettings NONE = new FaultSettings(
            Duration.ZERO, Duration.ZERO, 0, 500, 0, 0, 0, Fault.DEFAULT_HOLD, List.of(), DEFAULT_SEED);

    public FaultSettings {
        requireDelay(latency, "latency", true);
        requireDelay(latencyJitter, "latencyJitter", true);
        if (latency.plus(latencyJitter).compareTo(Fault.MAX_DELAY) > 0) {
            throw new IllegalArgumentException("latency + latencyJitter must be at most " + Fault.MAX_DELAY);
        }
        Checks.rate(errorRate, "errorRate");
        Checks.rate(timeoutRate, "timeoutRate");
        Checks.rate(timeoutAfterCaptureRate, "timeoutAfterCaptureRate");
        Checks.rate(dropResponseRate, "dropResponseRate");
        if (errorStatus < 500 || errorStatus > 599) {
            throw new IllegalArgumentException("errorStatus must be 5xx, was " + errorStatus);
        }
        requireDelay(timeoutHold, "timeoutHold", false);
        declines = List.copyOf(declines);
    }

    /** No faults at all. */
    public static FaultSettings none() {
        return NONE;
    }

    /** A builder starting from {@link #none()}. */
    public static Builder custom() {
        return new Builder(NONE);
    }

    /** A builder starting from {@code base}. */
    public static Builder from(FaultSettings base) {
        return new Builder(base);
    }

    private static void requireDelay(Duration d, String what, boolean zeroAllowed) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || (!zeroAllowed && d.isZero()) || d.compareTo(Fault.MAX_DELAY) > 0) {
            throw new IllegalArgumentException(
                    what + " must be in " + (zeroAllowed ? "[0, " : "(0, ") + Fault.MAX_DELAY + "]");
        }
    }

    /** Validating builder; {@link #build()} checks every value. */
    public static final class Builder {
        private Duration latency;
        private Duration latencyJitter;
        private double errorRate;
        private int errorStatus;
        private double timeoutRate;
        private double timeoutAfterCaptureRate;
        private double dropResponseRate;
        private Duration timeoutHold;
        private final List<DeclineRule> declines;
        private long seed;

        private Builder(FaultSettings base) {
            latency = base.latency;
            latencyJitter = base.latencyJitter;
            errorRate = base.errorRate;
            errorStatus = base.errorStatus;
            timeoutRate = base.timeoutRate;
            timeoutAfterCaptureRate = base.timeoutAfterCaptureRate;
            dropResponseRate = base.dropResponseRate;
            timeoutHold = base.timeoutHold;
            declines = new ArrayList<>(base.declines);
            seed = base.seed;
        }

        /** Fixed latency plus a uniformly drawn jitter in [0, jitter]. */
        public Builder latency(Duration fixed, Duration jitter) {
            this.latency = fixed;
            this.latencyJitter = jitter;
            return this;
        }

        /** Probability of a 500 before anything is recorded. */
        public Builder errorRate(double rate) {
            this.errorRate = rate;
            return this;
        }

        /** Status of the random errors (default 500). */
        public Builder errorStatus(int status) {
            this.errorStatus = status;
            return this;
        }

        /** Probability of a hang before anything is recorded. */
        public Builder timeoutRate(double rate) {
            this.timeoutRate = rate;
            return this;
        }

        /** Probability of a hang after the operation is committed. */
        public Builder timeoutAfterCaptureRate(double rate) {
            this.timeoutAfterCaptureRate = rate;
            return this;
        }

        /** Probability that the operation is committed and the response dropped. */
        public Builder dropResponseRate(double rate) {
            this.dropResponseRate = rate;
            return this;
        }

        /** How long random timeouts hang (default {@link Fault#DEFAULT_HOLD}). */
        public Builder timeoutHold(Duration hold) {
            this.timeoutHold = hold;
            return this;
        }

        /** Adds a decline rule after the existing ones. */
        public Builder decline(DeclineRule rule) {
            declines.add(Objects.requireNonNull(rule, "rule"));
            return this;
        }

        /** Removes every decline rule. */
        public Builder clearDeclines() {
            declines.clear();
            return this;
        }

        /** Seed of the random draws. */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        public FaultSettings build() {
            return new FaultSettings(
                    latency,
                    latencyJitter,
                    errorRate,
                    errorStatus,
                    timeoutRate,
                    timeoutAfterCaptureRate,
                    dropResponseRate,
                    timeoutHold,
                    declines,
                    seed);
        }
    }
}
