package dev.exactly.idempotency;

import java.time.Duration;
import java.util.Objects;

/**
 * Per-route settings: the lease (how long an owner may go without renewing before a retry may take
 * over), the retention (how long a finished record is replayed), what to do with a request that finds
 * its key in flight, and whether the engine keeps the lease alive while the action runs. Immutable;
 * build with {@link #ofDefaults()}, {@link #custom()} or {@link #from}.
 *
 * <p>With the keep-alive on (the default) the lease is not a bound on the action's running time: the
 * engine renews it every third of its length while the action runs, so the lease only decides how soon
 * a key is taken over after its owner died or stalled. Hence the short default of 10 seconds.
 *
 * @param lease     renewable ownership window, much shorter than the retention
 * @param retention how long records are kept and replayed
 * @param inFlight  reject with a conflict, or wait and replay
 * @param keepAlive automatic renewal while the action runs, and its bound
 */
public record IdempotencyPolicy(Duration lease, Duration retention, InFlightPolicy inFlight, KeepAlive keepAlive) {

    /** Default lease: 10 seconds (renewed while the action runs; see {@link KeepAlive}). */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(10);
    /** Default retention: 24 hours, as Stripe keeps keys. */
    public static final Duration DEFAULT_RETENTION = Duration.ofHours(24);
    /** The longest a request may be held waiting for another: 60 seconds. */
    public static final Duration MAX_WAIT = Duration.ofSeconds(60);
    /** The longest retention accepted: 30 days. */
    public static final Duration MAX_RETENTION = Duration.ofDays(30);

    private static final IdempotencyPolicy DEFAULTS = new IdempotencyPolicy(
            DEFAULT_LEASE, DEFAULT_RETENTION, InFlightPolicy.reject(Duration.ofSeconds(1)), KeepAlive.ofDefaults());

    public IdempotencyPolicy {
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(retention, "retention");
        Objects.requireNonNull(inFlight, "inFlight");
        Objects.requireNonNull(keepAlive, "keepAlive");
        if (lease.toMillis() < 1) {
            throw new IllegalArgumentException("lease must be at least 1 ms");
        }
        if (retention.compareTo(lease) <= 0) {
            throw new IllegalArgumentException("retention must be longer than the lease (two clocks, not one)");
        }
        if (retention.compareTo(MAX_RETENTION) > 0) {
            throw new IllegalArgumentException("retention must be at most " + MAX_RETENTION);
        }
        if (keepAlive.enabled() && keepAlive.maxHold().compareTo(lease) < 0) {
            throw new IllegalArgumentException("the keep-alive's max hold (" + keepAlive.maxHold()
                    + ") must be at least the lease (" + lease + "), or the keep-alive disabled");
        }
    }

    /** A policy with the default keep-alive. */
    public IdempotencyPolicy(Duration lease, Duration retention, InFlightPolicy inFlight) {
        this(lease, retention, inFlight, KeepAlive.ofDefaults());
    }

    /** 10 s lease kept alive for up to 5 minutes, 24 h retention, reject in-flight duplicates with Retry-After: 1. */
    public static IdempotencyPolicy ofDefaults() {
        return DEFAULTS;
    }

    public static Builder custom() {
        return new Builder(DEFAULTS);
    }

    public static Builder from(IdempotencyPolicy base) {
        return new Builder(base);
    }

    /** Validating builder. */
    public static final class Builder {
        private Duration lease;
        private Duration retention;
        private InFlightPolicy inFlight;
        private KeepAlive keepAlive;

        private Builder(IdempotencyPolicy base) {
            this.lease = base.lease;
            this.retention = base.retention;
            this.inFlight = base.inFlight;
            this.keepAlive = base.keepAlive;
        }

        public Builder lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        public Builder retention(Duration retention) {
            this.retention = retention;
            return this;
        }

        public Builder inFlight(InFlightPolicy inFlight) {
            this.inFlight = inFlight;
            return this;
        }

        /** Automatic renewal while the action runs: {@link KeepAlive#ofDefaults()} unless set. */
        public Builder keepAlive(KeepAlive keepAlive) {
            this.keepAlive = keepAlive;
            return this;
        }

        public IdempotencyPolicy build() {
            return new IdempotencyPolicy(lease, retention, inFlight, keepAlive);
        }
    }
}
