package dev.exactly.idempotency;

import java.time.Duration;
import java.util.Objects;

/**
 * Whether the engine keeps a running action's lease alive by itself, and for how long at most.
 *
 * <p>While an action runs under a policy with keep-alive on (the default), the engine renews its lease
 * every third of the lease ({@link #interval}), fenced by the owner token, without the action doing
 * anything; renewal stops the moment the action returns or throws. A lease therefore ends when its owner
 * dies or stalls (a crash, a frozen process, a blocked renewal), not when the owner is merely slow. So
 * that a hung action cannot hold its key forever, no renewal reaches past {@code maxHold} after the
 * claim: from then on the lease runs out as if the owner had died, and a retry may take the key over.
 *
 * @param enabled whether the lease is renewed automatically
 * @param maxHold the longest the keep-alive holds a key, counted from the claim; at least the lease
 */
public record KeepAlive(boolean enabled, Duration maxHold) {

    /** The default bound of a kept-alive hold: 5 minutes. */
    public static final Duration DEFAULT_MAX_HOLD = Duration.ofMinutes(5);
    /** How many renewals fall into one lease: the lease is renewed every third of it. */
    public static final int RENEWALS_PER_LEASE = 3;

    private static final KeepAlive DEFAULTS = new KeepAlive(true, DEFAULT_MAX_HOLD);
    private static final KeepAlive DISABLED = new KeepAlive(false, DEFAULT_MAX_HOLD);

    public KeepAlive {
        Objects.requireNonNull(maxHold, "maxHold");
        if (maxHold.toMillis() < 1) {
            throw new IllegalArgumentException("the keep-alive's max hold must be at least 1 ms");
        }
    }

    /** On, holding a key for at most {@link #DEFAULT_MAX_HOLD}. */
    public static KeepAlive ofDefaults() {
        return DEFAULTS;
    }

    /** Off: the lease ends {@code lease} after the claim unless the action renews it itself. */
    public static KeepAlive disabled() {
        return DISABLED;
    }

    /** On, holding a key for at most {@code maxHold} after its claim. */
    public static KeepAlive upTo(Duration maxHold) {
        return new KeepAlive(true, maxHold);
    }

    /** The pause between two renewals of {@code lease}: a third of it in whole milliseconds, at least 1 ms. */
    public static Duration interval(Duration lease) {
        return Duration.ofMillis(Math.max(1, lease.toMillis() / RENEWALS_PER_LEASE));
    }
}
