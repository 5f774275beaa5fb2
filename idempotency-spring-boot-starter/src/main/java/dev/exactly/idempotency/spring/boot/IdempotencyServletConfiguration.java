package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.StoreUnavailablePolicy;
import dev.exactly.idempotency.servlet.TenantResolver;
import dev.exactly.idempotency.spring.boot.IdempotencyProperties.Tenant;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * The servlet stack's part of {@link IdempotencyAutoConfiguration}: the {@link TenantResolver} from
 * {@code tenant.mode}, and the {@link IdempotencyFilter} on the routes of the properties, of
 * {@link IdempotentRoute} beans and of {@code @Idempotent} controller methods, registered on {@code /*} for
 * the REQUEST dispatch; on Tomcat, {@code Expect: 100-continue} answered when the body is read
 * ({@link TomcatContinueConfiguration}).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({IdempotencyFilter.class, Filter.class, FilterRegistrationBean.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@Import(TomcatContinueConfiguration.class)
class IdempotencyServletConfiguration {
    private static final Log log = LogFactory.getLog(IdempotencyServletConfiguration.class);

    private final IdempotencyProperties properties;

    IdempotencyServletConfiguration(IdempotencyProperties properties) {
        this.properties = properties;
    }

    @Bean
    @ConditionalOnMissingBean
    TenantResolver idempotencyTenantResolver() {
        Tenant tenant = properties.getTenant();
        return switch (tenant.getMode()) {
            case PRINCIPAL -> TenantResolver.principal();
            case API_KEYS -> TenantResolver.apiKeys(tenant.getApiKeys());
            case TRUSTED_HEADER ->
                TenantResolver.trustedHeader(String.valueOf(tenant.getHeader()).strip());
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
        String servletPath = mvc ? MvcMappings.pathPrefix(beans) : "";
        List<AnnotatedRoutes.Declared> configured = AnnotatedRoutes.configured(properties, routeBeans);
        List<IdempotentRoute> routes = AnnotatedRoutes.merge(
                configured, mvc ? MvcMappings.of(beans) : List.of(), properties, servletPath, environment);
        for (AnnotatedRoutes.Declared declared : configured) {
            String template = declared.route().pathTemplate();
            if (!servletPath.isEmpty() && !template.equals(servletPath) && !template.startsWith(servletPath + "/")) {
                // configured paths are context-relative, annotated ones are prefixed by the servlet path for
                // the user: a configured /v1/charges under spring.mvc.servlet.path=/api guards nothing there
                log.warn(declared.source() + " guards " + declared.route().method() + " " + template + ", a path "
                        + "relative to the context, but Spring MVC is mapped under " + servletPath + ": its handlers "
                        + "are reached at " + servletPath + template + ", which this route does not guard (write the "
                        + "path with " + servletPath + " in front, unless it is another servlet's)");
            }
        }
        if (routes.isEmpty()) {
            log.warn("No idempotent routes: annotate controller methods with @Idempotent, set "
                    + IdempotencyProperties.PREFIX + ".routes[0].path (and method) or define IdempotentRoute beans; "
                    + "until then every request passes through unguarded");
        }
        IdempotencyFilter filter = IdempotencyFilter.builder(engine)
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
                .build();
        FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setName(IdempotencyAutoConfiguration.FILTER_NAME);
        registration.addUrlPatterns("/*");
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        registration.setOrder(properties.getFilterOrder());
        return registration;
    }
}
