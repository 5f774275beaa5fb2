package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.TenantResolver;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spring.boot.health.IdempotencyStoreHealthIndicator;
import dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener;
import dev.exactly.testing.TestPostgres;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockHttpServletRequest;

/** What the auto-configuration creates from properties, and where it backs off. No server, no HTTP. */
class IdempotencyAutoConfigurationTest {
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    IdempotencyAutoConfiguration.class,
                    IdempotencyMetricsAutoConfiguration.class,
                    IdempotencyHealthAutoConfiguration.class))
            .withPropertyValues("exactly.idempotency.routes[0].path=/v1/charges");

    @Test
    void theContinueTimingIsSetOnTomcatOnlyAndCanBeTurnedOff() {
        runner.run(context -> assertThat(context).hasBean("idempotencyContinueOnRead"));
        runner.withPropertyValues("exactly.idempotency.continue-on-read=false")
                .run(context -> assertThat(context).doesNotHaveBean("idempotencyContinueOnRead"));
        // an application on another server: nothing of Tomcat is loaded, and the rest is configured as ever
        runner.withClassLoader(new FilteredClassLoader(TomcatServletWebServerFactory.class))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean("idempotencyContinueOnRead");
                    assertThat(context).hasSingleBean(FilterRegistrationBean.class);
                });
    }

    @Test
    void defaultsGiveAnInMemoryStoreAnEngineAndAFilterOnTheConfiguredRoutes() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(InMemoryIdempotencyStore.class);
            assertThat(context).hasSingleBean(IdempotencyEngine.class);
            assertThat(context.getBean(IdempotencyEngine.class).store())
                    .isSameAs(context.getBean(IdempotencyStore.class));
            FilterRegistrationBean<?> registration = context.getBean(FilterRegistrationBean.class);
            assertThat(filter(registration).routes()).containsExactly(IdempotentRoute.post("/v1/charges"));
            assertThat(registration.getUrlPatterns()).containsExactly("/*");
            assertThat(registration.getFilterName()).isEqualTo(IdempotencyAutoConfiguration.FILTER_NAME);
            // no MeterRegistry here: no metrics
            assertThat(context).doesNotHaveBean(MicrometerIdempotencyListener.class);
            assertThat(context).hasSingleBean(IdempotencyStoreHealthIndicator.class);
            assertThat(context.getBean(IdempotencyStoreHealthIndicator.class)
                            .health()
                            .getStatus())
                    .isEqualTo(Status.UP);
        });
    }

    @Test
    void aFullInMemoryStoreIsOutOfServiceAndEvictsFinishedRecordsWhenToldTo() {
        runner.withPropertyValues(
                        "exactly.idempotency.memory.max-entries=1",
                        "exactly.idempotency.memory.when-full=evict-finished")
                .run(context -> {
                    InMemoryIdempotencyStore store = context.getBean(InMemoryIdempotencyStore.class);
                    assertThat(store.stats().whenFull()).isEqualTo(InMemoryIdempotencyStore.WhenFull.EVICT_FINISHED);
                    IdempotencyStoreHealthIndicator health = context.getBean(IdempotencyStoreHealthIndicator.class);
                    assertThat(health.health().getStatus()).isEqualTo(Status.UP);

                    java.time.Duration lease = java.time.Duration.ofSeconds(30);
                    java.time.Duration retention = java.time.Duration.ofHours(1);
                    dev.exactly.idempotency.Fingerprint fp = new dev.exactly.idempotency.Fingerprint("t", "f");
                    store.claim(new dev.exactly.idempotency.ScopeKey("a".repeat(64)), fp, lease, retention);
                    assertThatThrownBy(() -> store.claim(
                                    new dev.exactly.idempotency.ScopeKey("b".repeat(64)), fp, lease, retention))
                            .isInstanceOf(dev.exactly.idempotency.StoreUnavailableException.class);
                    var full = health.health();
                    assertThat(full.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                    assertThat(full.getDetails())
                            .containsEntry("refusals", 1L)
                            .containsEntry("maxEntries", 1)
                            .containsKey("reason");
                });
    }

    @Test
    void routesTakeTheirOwnSettingsAndTheRestFromTheTopLevel() {
        runner.withPropertyValues(
                        "exactly.idempotency.lease=10s",
                        "exactly.idempotency.retention=2h",
                        "exactly.idempotency.in-flight.retry-after=3s",
                        "exactly.idempotency.in-flight.max-wait=7s",
                        "exactly.idempotency.routes[1].method=put",
                        "exactly.idempotency.routes[1].path=/v1/charges/{id}/refunds",
                        "exactly.idempotency.routes[1].key-required=false",
                        "exactly.idempotency.routes[1].retention=7d",
                        "exactly.idempotency.routes[1].in-flight.policy=wait",
                        "exactly.idempotency.routes[1].record-server-errors=true")
                .run(context -> {
                    List<IdempotentRoute> routes = filter(context.getBean(FilterRegistrationBean.class))
                            .routes();
                    assertThat(routes.get(0))
                            .isEqualTo(IdempotentRoute.builder("POST", "/v1/charges")
                                    .policy(new IdempotencyPolicy(
                                            Duration.ofSeconds(10),
                                            Duration.ofHours(2),
                                            InFlightPolicy.reject(Duration.ofSeconds(3))))
                                    .build());
                    assertThat(routes.get(1))
                            .isEqualTo(IdempotentRoute.builder("PUT", "/v1/charges/{id}/refunds")
                                    .keyRequired(false)
                                    .recordServerErrors(true)
                                    .policy(new IdempotencyPolicy(
                                            Duration.ofSeconds(10),
                                            Duration.ofDays(7),
                                            InFlightPolicy.waitUpTo(Duration.ofSeconds(7))))
                                    .build());
                });
    }

    @Test
    void routeBeansAreGuardedAfterTheConfiguredOnes() {
        runner.withBean("refunds", IdempotentRoute.class, () -> IdempotentRoute.post("/v1/refunds"))
                .run(context -> assertThat(filter(context.getBean(FilterRegistrationBean.class))
                                .routes())
                        .extracting(IdempotentRoute::pathTemplate)
                        .containsExactly("/v1/charges", "/v1/refunds"));
    }

    @Test
    void tenantModesBuildTheirResolvers() {
        runner.withPropertyValues(
                        "exactly.idempotency.tenant.mode=api-keys",
                        "exactly.idempotency.tenant.api-keys[sk_live_1]=acme")
                .run(context -> {
                    MockHttpServletRequest request = new MockHttpServletRequest();
                    request.addHeader("Authorization", "Bearer sk_live_1");
                    assertThat(context.getBean(TenantResolver.class).resolve(request))
                            .hasValue("acme");
                });
        runner.withPropertyValues(
                        "exactly.idempotency.tenant.mode=trusted-header",
                        "exactly.idempotency.tenant.header=X-Tenant-Id")
                .run(context -> {
                    MockHttpServletRequest request = new MockHttpServletRequest();
                    request.addHeader("X-Tenant-Id", "globex");
                    assertThat(context.getBean(TenantResolver.class).resolve(request))
                            .hasValue("globex");
                });
        runner.run(context -> {
            MockHttpServletRequest request = new MockHttpServletRequest();
            request.addHeader("X-Tenant-Id", "globex");
            assertThat(context.getBean(TenantResolver.class).resolve(request)).isEmpty();
            request.setUserPrincipal(() -> "initech");
            assertThat(context.getBean(TenantResolver.class).resolve(request)).hasValue("initech");
        });
    }

    @Test
    void backsOffForTheApplicationsOwnStoreEngineResolverAndFilter() {
        InMemoryIdempotencyStore own = InMemoryIdempotencyStore.create();
        runner.withPropertyValues("exactly.idempotency.store=redis") // would need a uri, but is not used
                .withPropertyValues("exactly.idempotency.redis.uri=redis://127.0.0.1:1")
                .withBean("myStore", IdempotencyStore.class, () -> own)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(RedisIdempotencyStore.class);
                    assertThat(context.getBean(IdempotencyEngine.class).store()).isSameAs(own);
                });
        IdempotencyEngine engine = IdempotencyEngine.builder(own).build();
        runner.withBean(IdempotencyEngine.class, () -> engine)
                .run(context ->
                        assertThat(context.getBean(IdempotencyEngine.class)).isSameAs(engine));
        TenantResolver resolver = TenantResolver.single("only");
        runner.withBean(TenantResolver.class, () -> resolver)
                .run(context ->
                        assertThat(context.getBean(TenantResolver.class)).isSameAs(resolver));
        runner.withUserConfiguration(OwnFilterRegistration.class).run(context -> {
            assertThat(context).hasSingleBean(FilterRegistrationBean.class);
            assertThat(filter(context.getBean(FilterRegistrationBean.class)).routes())
                    .containsExactly(IdempotentRoute.post("/mine"));
        });
        runner.withBean(
                        "plainFilter",
                        IdempotencyFilter.class,
                        () -> IdempotencyFilter.builder(engine)
                                .route(IdempotentRoute.post("/mine"))
                                .build())
                .run(context -> assertThat(context).doesNotHaveBean(FilterRegistrationBean.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnFilterRegistration {
        @Bean
        FilterRegistrationBean<IdempotencyFilter> myIdempotencyFilter() {
            IdempotencyEngine engine =
                    IdempotencyEngine.builder(InMemoryIdempotencyStore.create()).build();
            return new FilterRegistrationBean<>(IdempotencyFilter.builder(engine)
                    .route(IdempotentRoute.post("/mine"))
                    .build());
        }
    }

    @Test
    void disabledConfiguresNothing() {
        runner.withPropertyValues("exactly.idempotency.enabled=false")
                .withBean(SimpleMeterRegistry.class)
                .run(context -> {
                    assertThat(context).doesNotHaveBean(IdempotencyStore.class);
                    assertThat(context).doesNotHaveBean(IdempotencyEngine.class);
                    assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
                    assertThat(context).doesNotHaveBean(MicrometerIdempotencyListener.class);
                });
    }

    @Test
    void aMeterRegistryBringsTheMetricsListenerIntoTheEngineAlongsideTheApplicationsListeners() {
        List<String> seen = new CopyOnWriteArrayList<>();
        IdempotencyListener own = new IdempotencyListener() {
            @Override
            public void onClaim(IdempotencyRequest request, boolean takeover) {
                seen.add("claim " + request.scope().route());
            }
        };
        runner.withBean(SimpleMeterRegistry.class)
                .withBean("ownListener", IdempotencyListener.class, () -> own)
                .run(context -> {
                    assertThat(context).hasSingleBean(MicrometerIdempotencyListener.class);
                    EngineCalls.runOnce(context.getBean(IdempotencyEngine.class), "/v1/charges");
                    assertThat(seen).containsExactly("claim /v1/charges");
                    assertThat(context.getBean(MeterRegistry.class)
                                    .get(MicrometerIdempotencyListener.CLAIMS)
                                    .tag("route", "/v1/charges")
                                    .counter()
                                    .count())
                            .isEqualTo(1);
                });
        runner.withBean(SimpleMeterRegistry.class)
                .withPropertyValues("exactly.idempotency.metrics.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(MicrometerIdempotencyListener.class));
    }

    @Test
    void theHealthIndicatorCanBeSwitchedOff() {
        runner.withPropertyValues("management.health.idempotency.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(IdempotencyStoreHealthIndicator.class));
    }

    @Test
    void redisStoreIsBuiltFromItsUriWithoutConnecting() {
        runner.withPropertyValues(
                        "exactly.idempotency.store=redis",
                        "exactly.idempotency.redis.uri=redis-cluster://127.0.0.1:1,127.0.0.1:2",
                        "exactly.idempotency.redis.key-prefix=app:idem:",
                        "exactly.idempotency.redis.connect-timeout=200ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RedisIdempotencyStore store = context.getBean(RedisIdempotencyStore.class);
                    assertThat(store.config().keyPrefix()).isEqualTo("app:idem:");
                    assertThat(store.config().evictionAllowed())
                            .as("an evicting Redis refused by default")
                            .isFalse();
                    assertThat(store.toString()).contains("cluster");
                });
        runner.withPropertyValues(
                        "exactly.idempotency.store=redis",
                        "exactly.idempotency.redis.uri=redis://127.0.0.1:1",
                        "exactly.idempotency.redis.eviction-allowed=true")
                .run(context -> assertThat(context.getBean(RedisIdempotencyStore.class)
                                .config()
                                .evictionAllowed())
                        .isTrue());
    }

    @Test
    void postgresStoreUsesTheApplicationsDataSourceAndMigratesWhenAsked() {
        DataSource dataSource = TestPostgres.freshSchema("starter_autoconfig");
        runner.withPropertyValues(
                        "exactly.idempotency.store=postgres",
                        "exactly.idempotency.postgres.migrate=true",
                        "exactly.idempotency.postgres.table-name=app_idempotency")
                .withBean(DataSource.class, () -> dataSource)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(PostgresIdempotencyStore.class);
                    assertThat(tableExists(dataSource, "app_idempotency")).isTrue();
                    var health = context.getBean(IdempotencyStoreHealthIndicator.class)
                            .health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails()).containsKeys("store", "listening");
                });
    }

    @Test
    void postgresStoreWithoutMigrateLeavesTheSchemaAloneAndStopsTheStartupWithoutTheTable() {
        DataSource dataSource = TestPostgres.freshSchema("starter_nomigrate");
        runner.withPropertyValues("exactly.idempotency.store=postgres")
                .withBean(DataSource.class, () -> dataSource)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .isInstanceOf(InvalidIdempotencyPropertiesException.class)
                            .hasMessageContaining("exactly.idempotency.postgres.migrate=true");
                    assertThat(tableExists(dataSource, "idempotency_records")).isFalse();
                });
    }

    @Test
    void theJsonDepthLimitIsAPropertyAndValidated() {
        runner.withPropertyValues(
                        "exactly.idempotency.max-json-depth=3", "exactly.idempotency.max-request-body-size=2KB")
                .run(context -> {
                    IdempotencyFilter filter = filter(context.getBean(FilterRegistrationBean.class));
                    assertThat(filter.fingerprinter().maxJsonDepth()).isEqualTo(3);
                    assertThat(filter.fingerprinter().maxBodyBytes()).isEqualTo(2048);
                });
        runner.withPropertyValues("exactly.idempotency.max-json-depth=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("exactly.idempotency.max-json-depth must be between 1 and 1000");
        });
    }

    @SuppressWarnings("unchecked")
    private static IdempotencyFilter filter(FilterRegistrationBean<?> registration) {
        return ((FilterRegistrationBean<IdempotencyFilter>) registration).getFilter();
    }

    private static boolean tableExists(DataSource dataSource, String table) throws Exception {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rows = s.executeQuery("SELECT to_regclass('" + table + "') IS NOT NULL")) {
            rows.next();
            return rows.getBoolean(1);
        }
    }
}
