package dev.exactly.payments.demo;

import dev.exactly.psp.FaultSettings;
import java.time.Duration;

/**
 * The checkout page's processor switches, as run faults of the processor stand-in.
 *
 * @param slow         every charge request waits {@link #SLOW} at the processor
 * @param dropResponse every charge is captured and its response dropped (the service learns the outcome
 *                     only by asking the processor afterwards)
 */
public record ProcessorSwitches(boolean slow, boolean dropResponse) {
    /** How long a slow processor takes. */
    public static final Duration SLOW = Duration.ofSeconds(3);

    /** The switches that the processor's current fault settings amount to. */
    public static ProcessorSwitches of(FaultSettings settings) {
        return new ProcessorSwitches(settings.latency().compareTo(SLOW) >= 0, settings.dropResponseRate() >= 1.0);
    }

    /** The fault settings of these switches; the rest of {@code base} (errors, declines, seed) stays. */
    public FaultSettings applyTo(FaultSettings base) {
        return FaultSettings.from(base)
                .latency(slow ? SLOW : Duration.ZERO, Duration.ZERO)
                .dropResponseRate(dropResponse ? 1.0 : 0.0)
                .build();
    }
}
