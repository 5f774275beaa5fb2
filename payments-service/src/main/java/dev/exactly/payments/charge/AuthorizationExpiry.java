package dev.exactly.payments.charge;

import java.time.Duration;
import java.time.InstantSource;

/**
 * Voids authorizations older than their time to live ({@code exactly.payments.authorization-ttl}, 7 days by
 * default): every interval, up to a batch of them, each a void of its own ({@link ChargeActions#expireOne}:
 * at the processor, then the ledger's hold, then the charge). Any number of instances may run it: each
 * authorization is taken under a row lock that the others skip. {@link RecoveryWorker} runs the rounds on its
 * schedule, where recovery is enabled.
 */
public final class AuthorizationExpiry {
    private final ChargeActions actions;
    private final InstantSource clock;
    private final Settings settings;

    public AuthorizationExpiry(ChargeActions actions, InstantSource clock, Settings settings) {
        this.actions = actions;
        this.clock = clock;
        this.settings = settings;
    }

    /**
     * How long authorizations live and how the expiry runs.
     *
     * @param ttl      how long an authorization may stay uncaptured
     * @param interval the pause between rounds
     * @param batch    the most authorizations one round voids
     */
    public record Settings(Duration ttl, Duration interval, int batch) {
        public Settings {
            if (ttl.toMillis() < 1 || interval.toMillis() < 1 || batch < 1) {
                throw new IllegalArgumentException("exactly.payments.authorization-ttl and the expiry interval must be "
                        + "positive, the batch at least 1");
            }
        }
    }

    /**
     * One round: voids up to the batch of expired authorizations.
     *
     * @return how many were taken
     */
    public int runOnce() {
        int done = 0;
        while (done < settings.batch() && actions.expireOne(clock.instant().minus(settings.ttl()))) {
            done++;
        }
        return done;
    }

    /** The pause between scheduled rounds. */
    Duration interval() {
        return settings.interval();
    }
}
