package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.beans.factory.ObjectProvider;
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
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
        })
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

    /**
     * The PostgreSQL purge: {@code exactly.idempotency.purge.rows} (expired records deleted) and
     * {@code exactly.idempotency.purge.failures} (runs that failed), function counters.
     */
    @Bean
    MeterBinder idempotencyPurgeMeters(ObjectProvider<ExpiredRecordPurger> purgers) {
        return registry -> purgers.ifUnique(purger -> {
            FunctionCounter.builder("exactly.idempotency.purge.rows", purger, ExpiredRecordPurger::purged)
                    .description("expired idempotency records deleted by the scheduled purge")
                    .register(registry);
            FunctionCounter.builder("exactly.idempotency.purge.failures", purger, ExpiredRecordPurger::failures)
                    .description("scheduled purges of expired idempotency records that failed")
                    .register(registry);
        });
    }

    /**
     * The in-memory store's occupancy: {@code exactly.idempotency.memory.size} (gauge), {@code .evictions}
     * and {@code .refusals} (function counters), read from {@link InMemoryIdempotencyStore#stats()}.
     */
    @Bean
    MeterBinder idempotencyMemoryStoreMeters(ObjectProvider<InMemoryIdempotencyStore> stores) {
        return registry -> stores.ifUnique(store -> {
            Gauge.builder(
                            "exactly.idempotency.memory.size",
                            store,
                            s -> s.stats().size())
                    .description("records held by the in-memory idempotency store")
                    .register(registry);
            FunctionCounter.builder(
                            "exactly.idempotency.memory.evictions",
                            store,
                            s -> s.stats().evictions())
                    .description("finished records evicted to make room for new keys")
                    .register(registry);
            FunctionCounter.builder(
                            "exactly.idempotency.memory.refusals",
                            store,
                            s -> s.stats().refusals())
                    .description("new keys refused (503) because the store was full")
                    .register(registry);
        });
    }
}
