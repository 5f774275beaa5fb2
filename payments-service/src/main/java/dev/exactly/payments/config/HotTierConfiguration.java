package dev.exactly.payments.config;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.TenantResolver;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.payments.keys.DurableTier;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The hot tier: the idempotency filter on {@code POST /v1/charges} and {@code POST /v1/refunds}, in
 * front of the durable tier, configured from the {@code exactly.idempotency.*} properties (the same
 * names the Spring Boot starter reads). Its store is Redis when {@code REDIS_URL} is set (see
 * {@link HotTierEnvironment}: {@code redis://host:port}, or {@code redis-cluster://h1:p1,h2:p2}), and
 * in memory otherwise (one process only). It rejects or coalesces duplicates in one round trip and
 * replays finished answers; the tenant is the API key's principal. Answers the service marks as not
 * outcomes (conflicts, unknown processor outcomes) are not recorded here.
 *
 * <p>This configuration stands in for {@code idempotency-spring-boot-starter}, which reads the same
 * properties: with the starter on the class path it steps aside and the starter's auto-configuration
 * builds the filter (and picks up the replay-counting listener bean of {@link ServiceConfiguration}).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnMissingClass(HotTierConfiguration.STARTER)
public class HotTierConfiguration {
    /** The starter's auto-configuration: with the starter on the class path, it builds the hot tier instead. */
    static final String STARTER = "dev.exactly.idempotency.spring.boot.IdempotencyAutoConfiguration";
    private static final Logger log = LoggerFactory.getLogger(HotTierConfiguration.class);

    @Bean(destroyMethod = "close")
    IdempotencyStore hotStore(@Value("${exactly.idempotency.store:memory}") String store,
            @Value("${exactly.idempotency.redis.uri:}") String redisUrl,
            @Value("${exactly.idempotency.redis.key-prefix:exactly:idem:}") String keyPrefix) {
        if (!store.equals("redis")) {
            log.info("no REDIS_URL: the hot idempotency tier is in memory (one instance only)");
            return InMemoryIdempotencyStore.create();
        }
        return RedisIdempotencyStore.create(redisUrl.strip(), RedisStoreConfig.custom().keyPrefix(keyPrefix).build());
    }

    @Bean
    IdempotencyEngine hotEngine(IdempotencyStore hotStore, IdempotencyListener replayCounter) {
        return IdempotencyEngine.builder(hotStore).listener(replayCounter).build();
    }

    @Bean
    FilterRegistrationBean<IdempotencyFilter> hotTierFilter(IdempotencyEngine hotEngine,
            @Value("${exactly.idempotency.lease:30s}") Duration lease,
            @Value("${exactly.idempotency.retention:24h}") Duration retention,
            @Value("${exactly.idempotency.in-flight.policy:wait}") String inFlight,
            @Value("${exactly.idempotency.in-flight.max-wait:10s}") Duration inFlightWait,
            @Value("${exactly.idempotency.filter-order:" + (ServiceConfiguration.AUTH_FILTER_ORDER + 1) + "}") int order) {
        IdempotencyPolicy policy = IdempotencyPolicy.custom()
                .lease(lease)
                .retention(retention)
                .inFlight(inFlight.equals("wait") ? InFlightPolicy.waitUpTo(inFlightWait) : InFlightPolicy.reject(Duration.ofSeconds(1)))
                .build();
        IdempotencyFilter filter = IdempotencyFilter.builder(hotEngine)
                .route(IdempotentRoute.builder("POST", DurableTier.CHARGES_ROUTE).policy(policy).build())
                .route(IdempotentRoute.builder("POST", DurableTier.REFUNDS_ROUTE).policy(policy).build())
                .tenantResolver(TenantResolver.principal())
                .build();
        FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setOrder(order);
        registration.addUrlPatterns("/v1/charges", "/v1/refunds");
        return registration;
    }
}
