package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Registers the {@code exactly.idempotency.*} meters ({@link MicrometerIdempotencyListener}) when
 * Micrometer and a {@link MeterRegistry} are present (e.g. with {@code spring-boot-starter-actuator}).
 * Off with {@code exactly.idempotency.metrics.enabled=false}.
 */
@AutoConfiguration(
        before = IdempotencyAutoConfiguration.class,
        afterName = {
                "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass({IdempotencyEngine.class, MeterRegistry.class})
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnBooleanProperty(
        name = {IdempotencyProperties.PREFIX + ".enabled", IdempotencyProperties.PREFIX + ".metrics.enabled"},
        matchIfMissing = true)
public class IdempotencyMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    MicrometerIdempotencyListener idempotencyMetricsListener(MeterRegistry registry) {
        return new MicrometerIdempotencyListener(registry);
    }
}
