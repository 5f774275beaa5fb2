package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.ExecutionInterceptor;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spring.IdempotencyTemplate;
import java.time.InstantSource;
import java.util.List;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Auto-configures idempotent routes on a Spring MVC (servlet) application from the
 * {@code exactly.idempotency.*} properties ({@link IdempotencyProperties}):
 * <ul>
 *   <li>the guarded routes: those of the properties, of {@code IdempotentRoute} beans, and every controller
 *       method annotated with {@link dev.exactly.idempotency.spring.Idempotent} in Spring MVC's (or WebFlux's)
 *       handler mappings (a route declared twice stops the startup, naming both declarations), guarded by the
 *       servlet filter in a servlet application and by the WebFlux filter ({@code idempotency-webflux}) in a
 *       reactive one;</li>
 *   <li>an {@link IdempotencyStore}: {@code store=memory} (default), {@code redis} (needs
 *       {@code idempotency-redis} and {@code redis.uri}) or {@code postgres} (needs
 *       {@code idempotency-postgres} and a {@link DataSource}; {@code postgres.migrate=true} creates its
 *       table);</li>
 *   <li>an {@link IdempotencyEngine} on that store, observed by every {@link IdempotencyListener} bean
 *       (for instance the Micrometer one of {@link IdempotencyMetricsAutoConfiguration}, and the
 *       {@link StoreErrorLogger}, which logs store failures at most once per 30 s);</li>
 *   <li>a {@link TenantResolver} from {@code tenant.mode};</li>
 *   <li>a {@code FilterRegistrationBean} of the {@code IdempotencyFilter} for the configured routes, plus
 *       any {@link IdempotentRoute} beans, on {@code /*} for the REQUEST dispatch.</li>
 * </ul>
 * Each part backs off when the application defines its own bean of that type (for the filter: an
 * {@code IdempotencyFilter} bean or a {@code FilterRegistrationBean<IdempotencyFilter>}). The whole
 * configuration is off with {@code exactly.idempotency.enabled=false}.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
        })
@ConditionalOnClass(IdempotencyEngine.class)
@ConditionalOnBooleanProperty(name = IdempotencyProperties.PREFIX + ".enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
@Import({
    IdempotencyServletConfiguration.class,
    IdempotencyReactiveConfiguration.class,
    IdempotencyAutoConfiguration.TemplateConfiguration.class,
    IdempotencyAutoConfiguration.MemoryStoreConfiguration.class,
    IdempotencyAutoConfiguration.RedisStoreConfiguration.class,
    IdempotencyAutoConfiguration.PostgresStoreConfiguration.class
})
public class IdempotencyAutoConfiguration {
    /** The name of the filter registration (and of the filter in the servlet context). */
    public static final String FILTER_NAME = "idempotencyFilter";

    private final IdempotencyProperties properties;

    /**
     * Takes the properties first: they are bound and checked before any bean of this configuration
     * is made, so that a bad configuration is reported as such, not as a missing bean.
     */
    IdempotencyAutoConfiguration(IdempotencyProperties properties) {
        this.properties = properties;
    }

    @Bean
    @ConditionalOnMissingBean
    IdempotencyEngine idempotencyEngine(
            IdempotencyStore store,
            ObjectProvider<IdempotencyListener> listeners,
            ObjectProvider<ExecutionInterceptor> interceptors) {
        return IdempotencyEngine.builder(store)
                .listener(CompositeIdempotencyListener.of(
                        listeners.orderedStream().toList()))
                .interceptor(nested(interceptors.orderedStream().toList()))
                .pollInterval(properties.getPollInterval())
                .build();
    }

    /** The interceptors, the first outermost. */
    @SuppressWarnings("ReferenceEquality") // identity: the NONE instance, not an equal one
    static ExecutionInterceptor nested(List<ExecutionInterceptor> interceptors) {
        ExecutionInterceptor nested = ExecutionInterceptor.NONE;
        for (ExecutionInterceptor current : interceptors.reversed()) {
            ExecutionInterceptor within = nested;
            nested = within == ExecutionInterceptor.NONE
                    ? current
                    : (request, execution) -> current.intercept(request, () -> within.intercept(request, execution));
        }
        return nested;
    }

    /** Logs store failures, rate-limited; the engine calls it with every other listener. */
    @Bean
    @ConditionalOnMissingBean
    StoreErrorLogger idempotencyStoreErrorLogger(IdempotencyProperties properties) {
        return new StoreErrorLogger(
                InstantSource.system(),
                StoreErrorLogger.DEFAULT_INTERVAL,
                properties.getWhenStoreUnavailable() == IdempotencyProperties.StoreUnavailableMode.PASS_THROUGH);
    }

    /**
     * Runs non-HTTP work once per key ({@code @Autowired IdempotencyTemplate}), storing results as JSON
     * through the application's Jackson mapper (a default one if the application has none), with the default
     * policy of the routes.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObjectMapper.class)
    static class TemplateConfiguration {
        @Bean
        @ConditionalOnMissingBean
        IdempotencyTemplate idempotencyTemplate(
                IdempotencyEngine engine, ObjectProvider<ObjectMapper> mappers, IdempotencyProperties properties) {
            return new IdempotencyTemplate(
                    engine,
                    mappers.getIfUnique(() -> JsonMapper.builder().build()),
                    PropertiesReader.defaultPolicy(properties));
        }
    }

    /** {@code store=memory} (the default). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(IdempotencyStore.class)
    @ConditionalOnProperty(
            name = IdempotencyProperties.PREFIX + ".store",
            havingValue = "memory",
            matchIfMissing = true)
    static class MemoryStoreConfiguration {
        @Bean
        InMemoryIdempotencyStore idempotencyStore(IdempotencyProperties properties) {
            return InMemoryIdempotencyStore.builder()
                    .clock(InstantSource.system())
                    .maxEntries(properties.getMemory().getMaxEntries())
                    .whenFull(properties.getMemory().getWhenFull())
                    .build();
        }
    }

    /**
     * {@code store=redis}: a store with its own Lettuce client, connected on first use, to {@code redis.uri},
     * or without it to Spring Boot's Redis connection details ({@code spring.data.redis.*},
     * {@code @ServiceConnection}, Docker Compose).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = PropertiesReader.REDIS_STORE_CLASS)
    @ConditionalOnMissingBean(IdempotencyStore.class)
    @ConditionalOnProperty(name = IdempotencyProperties.PREFIX + ".store", havingValue = "redis")
    static class RedisStoreConfiguration {
        @Bean
        RedisIdempotencyStore idempotencyStore(IdempotencyProperties properties, ListableBeanFactory beans) {
            return RedisStores.create(properties.getRedis(), beans);
        }
    }

    /**
     * {@code store=postgres}: the application's DataSource; the table is created if {@code postgres.migrate},
     * and checked. The store is made after the application's database initialisation (Flyway, Liquibase,
     * {@code spring.sql.init}), so a table that Flyway creates is there when it is checked.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = PropertiesReader.POSTGRES_STORE_CLASS)
    @ConditionalOnMissingBean(IdempotencyStore.class)
    @ConditionalOnProperty(name = IdempotencyProperties.PREFIX + ".store", havingValue = "postgres")
    static class PostgresStoreConfiguration {
        /** Spring Boot's DataSource auto-configuration, which spring-boot-starter-jdbc brings. */
        static final String DATA_SOURCE_AUTO_CONFIGURATION =
                "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration";

        @Bean
        @DependsOnDatabaseInitialization
        PostgresIdempotencyStore idempotencyStore(
                IdempotencyProperties properties,
                ObjectProvider<DataSource> dataSources,
                Environment environment,
                ResourceLoader resourceLoader) {
            DataSource dataSource = dataSources.getIfUnique();
            if (dataSource == null) {
                throw new InvalidIdempotencyPropertiesException(List.of(
                        missingDataSource(dataSources.stream().count(), environment, resourceLoader.getClassLoader())));
            }
            return PostgresStores.create(dataSource, properties.getPostgres());
        }

        /** Deletes expired records every {@code postgres.purge.interval}; off with {@code postgres.purge.enabled=false}. */
        @Bean
        @ConditionalOnBooleanProperty(
                name = IdempotencyProperties.PREFIX + ".postgres.purge.enabled",
                matchIfMissing = true)
        ExpiredRecordPurger idempotencyRecordPurger(PostgresIdempotencyStore store, IdempotencyProperties properties) {
            IdempotencyProperties.Purge purge = properties.getPostgres().getPurge();
            return new ExpiredRecordPurger(store::purgeAllExpired, purge.getInterval(), purge.getBatchSize());
        }

        private static String missingDataSource(
                long dataSources, Environment environment, @Nullable ClassLoader classLoader) {
            String problem = PropertiesReader.P + "store=postgres needs one DataSource bean";
            if (dataSources > 1) {
                return problem + ", and there are " + dataSources + ": mark the one for idempotency records @Primary";
            }
            if (!ClassUtils.isPresent(DATA_SOURCE_AUTO_CONFIGURATION, classLoader)) {
                return problem
                        + ", and there is none: add the dependency org.springframework.boot:spring-boot-starter-jdbc, "
                        + "which makes a pooled DataSource from spring.datasource.url (also .username, .password)"
                        + (environment.containsProperty("spring.datasource.url")
                                ? " (spring.datasource.url is set, but without that starter nothing reads it)"
                                : "")
                        + ", or define a DataSource @Bean";
            }
            return problem + ", and there is none: set spring.datasource.url (also .username, .password), "
                    + "or define a DataSource @Bean";
        }
    }
}
