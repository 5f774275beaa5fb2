package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.spring.boot.actuate.IdempotencyEndpoint;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * The operators' Actuator endpoint {@code idempotency} ({@link IdempotencyEndpoint}): read a record by
 * tenant and key, release one stuck in flight. Off by default: it needs
 * {@code management.endpoint.idempotency.access} ({@code read-only} or {@code unrestricted}) and
 * {@code management.endpoints.web.exposure.include=idempotency}.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass({IdempotencyEngine.class, Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean(IdempotencyEngine.class)
@ConditionalOnAvailableEndpoint(IdempotencyEndpoint.class)
public class IdempotencyEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    IdempotencyEndpoint idempotencyEndpoint(IdempotencyEngine engine, ListableBeanFactory beans) {
        return new IdempotencyEndpoint(engine, () -> guardedRoutes(beans));
    }

    /** The routes of every idempotency filter of the application, in their matching order. */
    static List<IdempotentRoute> guardedRoutes(ListableBeanFactory beans) {
        Set<IdempotentRoute> routes = new LinkedHashSet<>();
        if (PropertiesReader.present(SERVLET_FILTER_CLASS) && PropertiesReader.present(FILTER_REGISTRATION_CLASS)) {
            ServletRoutes.collect(beans, routes);
        }
        if (PropertiesReader.present(WEBFLUX_FILTER_CLASS)) {
            ReactiveRoutes.collect(beans, routes);
        }
        return new ArrayList<>(routes);
    }

    private static final String WEBFLUX_FILTER_CLASS = "dev.exactly.idempotency.webflux.IdempotencyWebFilter";

    /** Loaded only when the WebFlux filter is present. */
    private static final class ReactiveRoutes {
        static void collect(ListableBeanFactory beans, Set<IdempotentRoute> routes) {
            beans.getBeansOfType(dev.exactly.idempotency.webflux.IdempotencyWebFilter.class)
                    .values()
                    .forEach(f -> routes.addAll(f.routes()));
        }
    }

    private static final String SERVLET_FILTER_CLASS = "dev.exactly.idempotency.servlet.IdempotencyFilter";
    private static final String FILTER_REGISTRATION_CLASS =
            "org.springframework.boot.web.servlet.FilterRegistrationBean";

    /** Loaded only when the servlet filter and Spring's servlet support are present. */
    private static final class ServletRoutes {
        static void collect(ListableBeanFactory beans, Set<IdempotentRoute> routes) {
            beans.getBeansOfType(IdempotencyFilter.class).values().forEach(f -> routes.addAll(f.routes()));
            for (FilterRegistrationBean<?> registration :
                    beans.getBeansOfType(FilterRegistrationBean.class).values()) {
                if (registration.getFilter() instanceof IdempotencyFilter filter) {
                    routes.addAll(filter.routes());
                }
            }
        }
    }
}
