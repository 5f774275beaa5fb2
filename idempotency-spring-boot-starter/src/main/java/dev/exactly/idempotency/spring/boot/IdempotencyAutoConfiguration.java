package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.ExecutionInterceptor;
import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.TenantResolver;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spring.boot.IdempotencyProperties.Tenant;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.util.ClassUtils;

/**
 * Auto-configures idempotent routes on a Spring MVC (servlet) application from the
 * {@code exactly.idempotency.*} properties ({@link IdempotencyProperties}):
 * <ul>
 *   <li>the guarded routes: those of the properties, of {@link IdempotentRoute} beans, and every controller
 *       method annotated with {@link dev.exactly.idempotency.spring.Idempotent} in Spring MVC's handler
 *       mappings (a route declared twice stops the startup, naming both declarations);</li>
 *   <li>an {@link IdempotencyStore}: {@code store=memory} (default), {@code redis} (needs
 *       {@code idempotency-redis} and {@code redis.uri}) or {@code postgres} (needs
 *       {@code idempotency-postgres} and a {@link DataSource}; {@code postgres.migrate=true} creates its
 *       table);</li>
 *   <li>an {@link IdempotencyEngine} on that store, observed by every {@link IdempotencyListener} bean
 *       (for instance the Micrometer one of {@link IdempotencyMetricsAutoConfiguration}, and the
 *       {@link StoreErrorLogger}, which logs store failures at most once per 30 s);</li>
 *   <li>a {@link TenantResolver} from {@code tenant.mode};</li>
 *   <li>a {@link FilterRegistrationBean} of the {@link IdempotencyFilter} for the configured routes, plus
 *       any {@link IdempotentRoute} beans, on {@code /*} for the REQUEST dispatch.</li>
 * </ul>
 * Each part backs off when the application defines its own bean of that type (for the filter: an
 * {@link IdempotencyFilter} bean or a {@code FilterRegistrationBean<IdempotencyFilter>}). The whole
 * configuration is off with {@code exactly.idempotency.enabled=false}.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass({IdempotencyEngine.class, IdempotencyFilter.class, Filter.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = IdempotencyProperties.PREFIX + ".enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
@Import({
        IdempotencyAutoConfiguration.MemoryStoreConfiguration.class,
        IdempotencyAutoConfiguration.RedisStoreConfiguration.class,
        IdempotencyAutoConfiguration.PostgresStoreConfiguration.class})
public class IdempotencyAutoConfiguration {
    /** The name of the filter registration (and of the filter in the servlet context). */
    public static final String FILTER_NAME = "idempotencyFilter";

    private static final Log log = LogFactory.getLog(IdempotencyAutoConfiguration.class);

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
    IdempotencyEngine idempotencyEngine(IdempotencyStore store, ObjectProvider<IdempotencyListener> listeners,
            ObjectProvider<ExecutionInterceptor> interceptors) {
        return IdempotencyEngine.builder(store)
                .listener(CompositeIdempotencyListener.of(listeners.orderedStream().toList()))
                .interceptor(nested(interceptors.orderedStream().toList()))
                .pollInterval(properties.getPollInterval())
                .build();
    }

    /** The interceptors, the first outermost. */
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
    StoreErrorLogger idempotencyStoreErrorLogger() {
        return new StoreErrorLogger(InstantSource.system(), StoreErrorLogger.DEFAULT_INTERVAL);
    }

    @Bean
    @ConditionalOnMissingBean
    TenantResolver idempotencyTenantResolver() {
        Tenant tenant = properties.getTenant();
        return switch (tenant.getMode()) {
            case PRINCIPAL -> TenantResolver.principal();
            case API_KEYS -> TenantResolver.apiKeys(tenant.getApiKeys());
            case TRUSTED_HEADER -> TenantResolver.trustedHeader(String.valueOf(tenant.getHeader()).strip());
        };
    }

    @Bean
    @ConditionalOnMissingBean(value = IdempotencyFilter.class, parameterizedContainer = FilterRegistrationBean.class)
    FilterRegistrationBean<IdempotencyFilter> idempotencyFilterRegistration(
            IdempotencyEngine engine,
            TenantResolver tenantResolver,
            ObjectProvider<IdempotentRoute> routeBeans,
            ListableBeanFactory beans,
            Environment environment) {
        boolean mvc = PropertiesReader.present(MvcMappings.HANDLER_MAPPING_CLASS);
        List<IdempotentRoute> routes = AnnotatedRoutes.merge(
                configuredRoutes(routeBeans),
                mvc ? MvcMappings.of(beans) : List.of(),
                properties,
                mvc ? MvcMappings.pathPrefix(beans) : "",
                environment);
        if (routes.isEmpty()) {
            log.warn("No idempotent routes: annotate controller methods with @Idempotent, set "
                    + IdempotencyProperties.PREFIX + ".routes[0].path (and method) or define IdempotentRoute beans; "
                    + "until then every request passes through unguarded");
        }
        IdempotencyFilter filter = IdempotencyFilter.builder(engine)
                .routes(routes)
                .keyHeader(properties.getKeyHeader().strip(),
                        properties.getKeyHeaderAliases().stream().map(String::strip).toArray(String[]::new))
                .tenantResolver(tenantResolver)
                .fingerprinter(Fingerprinter.of(Math.toIntExact(properties.getMaxRequestBodySize().toBytes()),
                        properties.getMaxJsonDepth()))
                .maxStoredResponseBytes(Math.toIntExact(properties.getMaxStoredResponseSize().toBytes()))
                .replayHeaders(properties.getReplayHeaders().toArray(String[]::new))
                .credentialHeaders(properties.getCredentialHeaders().toArray(String[]::new))
                .storeUnavailableRetryAfter(properties.getStoreUnavailableRetryAfter())
                .unauthenticatedChallenge(properties.getTenant().getChallenge())
                .build();
        FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setName(FILTER_NAME);
        registration.addUrlPatterns("/*");
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        registration.setOrder(properties.getFilterOrder());
        return registration;
    }

    /** The routes of the properties, then those of {@link IdempotentRoute} beans, each with where it was declared. */
    private List<AnnotatedRoutes.Declared> configuredRoutes(ObjectProvider<IdempotentRoute> routeBeans) {
        List<AnnotatedRoutes.Declared> configured = new ArrayList<>();
        List<IdempotentRoute> fromProperties = PropertiesReader.routes(properties);
        for (int i = 0; i < fromProperties.size(); i++) {
            configured.add(new AnnotatedRoutes.Declared(PropertiesReader.P + "routes[" + i + "]", fromProperties.get(i)));
        }
        routeBeans.orderedStream().forEach(route -> configured.add(new AnnotatedRoutes.Declared(
                "an IdempotentRoute bean", route)));
        return configured;
    }

    /** {@code store=memory} (the default). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(IdempotencyStore.class)
    @ConditionalOnProperty(name = IdempotencyProperties.PREFIX + ".store", havingValue = "memory", matchIfMissing = true)
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
        @ConditionalOnBooleanProperty(name = IdempotencyProperties.PREFIX + ".postgres.purge.enabled", matchIfMissing = true)
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
                return problem + ", and there is none: add the dependency org.springframework.boot:spring-boot-starter-jdbc, "
                        + "which makes a pooled DataSource from spring.datasource.url (also .username, .password)"
                        + (environment.containsProperty("spring.datasource.url")
                                ? " (spring.datasource.url is set, but without that starter nothing reads it)" : "")
                        + ", or define a DataSource @Bean";
            }
            return problem + ", and there is none: set spring.datasource.url (also .username, .password), "
                    + "or define a DataSource @Bean";
        }
    }
}
