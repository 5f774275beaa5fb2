package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.spring.boot.observation.IdempotencyObservationConvention;
import dev.exactly.idempotency.spring.boot.observation.ObservingIdempotencyListener;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Makes each guarded execution a Micrometer Observation {@code exactly.idempotency}
 * ({@link ObservingIdempotencyListener}) when an {@link ObservationRegistry} is present (Spring Boot makes
 * one with Actuator): a span when tracing is on, a timer tagged {@code route}, {@code method} and
 * {@code outcome} when metrics are. Off with {@code exactly.idempotency.observation.enabled=false}.
 */
@AutoConfiguration(
        before = IdempotencyAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({IdempotencyEngine.class, ObservationRegistry.class})
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(
        name = {IdempotencyProperties.PREFIX + ".enabled", IdempotencyProperties.PREFIX + ".observation.enabled"},
        matchIfMissing = true)
public class IdempotencyObservationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    ObservingIdempotencyListener idempotencyObservation(
            ObservationRegistry registry, ObjectProvider<IdempotencyObservationConvention> conventions) {
        return new ObservingIdempotencyListener(
                registry, conventions.getIfUnique(() -> IdempotencyObservationConvention.DEFAULT));
    }
}
