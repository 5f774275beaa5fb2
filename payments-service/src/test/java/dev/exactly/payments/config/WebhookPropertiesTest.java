package dev.exactly.payments.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.payments.webhooks.RetrySchedule;
import java.time.Duration;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/** The webhook settings are checked when the service starts, and the retry schedule backs off with jitter. */
class WebhookPropertiesTest {

    private static WebhookProperties props(
            int maxAttempts,
            Duration retryDelay,
            Duration maxRetryDelay,
            Duration connect,
            Duration request,
            Duration lease) {
        return new WebhookProperties(
                true,
                Duration.ofSeconds(1),
                20,
                16,
                2,
                maxAttempts,
                retryDelay,
                maxRetryDelay,
                connect,
                request,
                lease,
                false);
    }

    @Test
    void theDefaultsAreValidAndBadValuesStopTheStartupNamingTheProperty() {
        WebhookProperties defaults = props(
                12,
                Duration.ofSeconds(10),
                Duration.ofHours(1),
                Duration.ofSeconds(2),
                Duration.ofSeconds(10),
                Duration.ofSeconds(30));
        assertThat(defaults.settings(false).retries().maxAttempts()).isEqualTo(12);
        assertThat(defaults.settings(false).allowPrivateNetworks()).isFalse();
        assertThat(defaults.settings(true).allowPrivateNetworks())
                .as("demo mode")
                .isTrue();
        assertThatThrownBy(() -> props(
                        12,
                        Duration.ofSeconds(10),
                        Duration.ofHours(1),
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(12)))
                .hasMessageContaining("exactly.payments.webhooks.lease");
        assertThatThrownBy(() -> props(
                        0,
                        Duration.ofSeconds(10),
                        Duration.ofHours(1),
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(30)))
                .hasMessageContaining("exactly.payments.webhooks.max-attempts");
        assertThatThrownBy(() -> props(
                        12,
                        Duration.ofMinutes(10),
                        Duration.ofMinutes(1),
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(30)))
                .hasMessageContaining("exactly.payments.webhooks.retry-delay");
        assertThatThrownBy(() -> props(
                        12,
                        Duration.ofSeconds(10),
                        Duration.ofHours(1),
                        Duration.ZERO,
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(30)))
                .hasMessageContaining("exactly.payments.webhooks.connect-timeout");
        assertThat(defaults.settings(false).perEndpoint()).isEqualTo(2);
        assertThatThrownBy(() -> new WebhookProperties(
                        true,
                        Duration.ofSeconds(1),
                        20,
                        4,
                        5,
                        12,
                        Duration.ofSeconds(10),
                        Duration.ofHours(1),
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(30),
                        false))
                .hasMessageContaining("exactly.payments.webhooks.per-endpoint-parallelism");
        assertThatThrownBy(() -> new WebhookProperties(
                        true,
                        Duration.ofSeconds(1),
                        20,
                        4,
                        0,
                        12,
                        Duration.ofSeconds(10),
                        Duration.ofHours(1),
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(30),
                        false))
                .hasMessageContaining("exactly.payments.webhooks.per-endpoint-parallelism");
    }

    @Test
    void pausesDoubleUpToTheCapAndAreDrawnFromTheUpperHalf() {
        RetrySchedule schedule = new RetrySchedule(12, Duration.ofSeconds(10), Duration.ofHours(1));
        assertThat(schedule.ceiling(1)).isEqualTo(Duration.ofSeconds(10));
        assertThat(schedule.ceiling(2)).isEqualTo(Duration.ofSeconds(20));
        assertThat(schedule.ceiling(9)).isEqualTo(Duration.ofSeconds(2560));
        assertThat(schedule.ceiling(10)).isEqualTo(Duration.ofHours(1));
        assertThat(schedule.ceiling(100)).isEqualTo(Duration.ofHours(1));
        RandomGenerator random = RandomGenerator.of("L64X128MixRandom");
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 10_000; i++) {
            long d = schedule.delayAfter(3, random).toMillis();
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        assertThat(min).isBetween(20_000L, 21_000L);
        assertThat(max).isBetween(39_000L, 40_000L);
        assertThat(schedule.exhausted(11)).isFalse();
        assertThat(schedule.exhausted(12)).isTrue();
    }
}
