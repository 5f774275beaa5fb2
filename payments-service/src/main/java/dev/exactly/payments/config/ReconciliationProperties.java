package dev.exactly.payments.config;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The scheduled reconciliation ({@code exactly.payments.reconciliation.*}).
 *
 * @param enabled  whether this instance compares the processor's books with its own on a schedule
 * @param interval pause between two runs
 * @param lookback the window of each run, ending at the run
 */
@ConfigurationProperties("exactly.payments.reconciliation")
public record ReconciliationProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("10m") Duration interval,
        @DefaultValue("24h") Duration lookback) {

    public ReconciliationProperties {
        if (interval.toMillis() < 1 || lookback.toMillis() < 1) {
            throw new IllegalArgumentException(
                    "exactly.payments.reconciliation.interval and .lookback must be at least 1ms");
        }
    }
}
