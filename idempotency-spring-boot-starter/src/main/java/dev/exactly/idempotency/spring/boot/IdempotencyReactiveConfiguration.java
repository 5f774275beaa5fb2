package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.StoreUnavailablePolicy;
import dev.exactly.idempotency.spring.boot.IdempotencyProperties.Tenant;
import dev.exactly.idempotency.webflux.IdempotencyWebFilter;
import dev.exactly.idempotency.webflux.ReactiveTenantResolver;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.server.WebFilter;

/**
 * The reactive stack's part of {@link IdempotencyAutoConfiguration}: the {@link ReactiveTenantResolver} from
 * {@code tenant.mode}, and the {@link IdempotencyWebFilter} (module {@code idempotency-webflux}) on the routes
 * of the properties, of {@link IdempotentRoute} beans and of {@code @Idempotent} methods of WebFlux
 * controllers, with the same properties as the servlet filter ({@code filter-order} is the WebFilter's order).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({IdempotencyWebFilter.class, WebFilter.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
class IdempotencyReactiveConfiguration {
    private static final Log log = LogFactory.getLog(IdempotencyReactiveConfiguration.class);

    private final IdempotencyProperties properties;

    IdempotencyReactiveConfiguration(IdempotencyProperties properties) {
        this.properties = properties;
    }

    @Bean
    @ConditionalOnMissingBean
    ReactiveTenantResolver idempotencyReactiveTenantResolver() {
        Tenant tenant = properties.getTenant();
        return switch (tenant.getMode()) {
            case PRINCIPAL -> ReactiveTenantResolver.principal();
            case API_KEYS -> ReactiveTenantResolver.apiKeys(tenant.getApiKeys());
            case TRUSTED_HEADER ->
                ReactiveTenantResolver.trustedHeader(
                        String.valueOf(tenant.getHeader()).strip());
        };
    }

    @Bean
    @ConditionalOnMissingBean
    IdempotencyWebFilter idempotencyWebFilter(
            IdempotencyEngine engine,
            ReactiveTenantResolver tenantResolver,
            ObjectProvider<IdempotentRoute> routeBeans,
            ListableBeanFactory beans,
            Environment environment) {
        List<IdempotentRoute> routes = AnnotatedRoutes.merge(
                AnnotatedRoutes.configured(properties, routeBeans),
                WebFluxMappings.of(beans),
                properties,
                "",
                environment);
        ClassLoader loader = getClass().getClassLoader();
        String netty = ReactorNettyCheck.servesOnNetty(beans, loader)
                ? ReactorNettyCheck.warning(ReactorNettyCheck.version(loader))
                : null;
        if (netty != null) {
            log.warn(netty);
        }
        if (routes.isEmpty()) {
            log.warn("No idempotent routes: annotate controller methods with @Idempotent, set "
                    + IdempotencyProperties.PREFIX + ".routes[0].path (and method) or define IdempotentRoute beans; "
                    + "until then every request passes through unguarded");
        }
        return IdempotencyWebFilter.builder(engine)
                .routes(routes)
                .keyHeader(
                        properties.getKeyHeader().strip(),
                        properties.getKeyHeaderAliases().stream()
                                .map(String::strip)
                                .toArray(String[]::new))
                .tenantResolver(tenantResolver)
                .fingerprinter(Fingerprinter.of(
                        Math.toIntExact(properties.getMaxRequestBodySize().toBytes()), properties.getMaxJsonDepth()))
                .maxStoredResponseBytes(
                        Math.toIntExact(properties.getMaxStoredResponseSize().toBytes()))
                .replayHeaders(properties.getReplayHeaders().toArray(String[]::new))
                .credentialHeaders(properties.getCredentialHeaders().toArray(String[]::new))
                .storeUnavailableRetryAfter(properties.getStoreUnavailableRetryAfter())
                .whenStoreUnavailable(StoreUnavailablePolicy.valueOf(
                        properties.getWhenStoreUnavailable().name()))
                .unauthenticatedChallenge(properties.getTenant().getChallenge())
                .order(properties.getFilterOrder())
                .build();
    }
}
