package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spring.boot.health.IdempotencyStoreHealthIndicator;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Contributes the store's health to Actuator as {@code idempotency}
 * ({@link IdempotencyStoreHealthIndicator}) when {@code spring-boot-health} is present. Off with
 * {@code management.health.idempotency.enabled=false}.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass({IdempotencyEngine.class, HealthIndicator.class})
@ConditionalOnSingleCandidate(IdempotencyStore.class)
@ConditionalOnEnabledHealthIndicator("idempotency")
public class IdempotencyHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "idempotencyHealthIndicator")
    IdempotencyStoreHealthIndicator idempotencyHealthIndicator(
            IdempotencyStore store, ObjectProvider<DataSource> dataSources) {
        return new IdempotencyStoreHealthIndicator(store, dataSources.getIfUnique());
    }
}
