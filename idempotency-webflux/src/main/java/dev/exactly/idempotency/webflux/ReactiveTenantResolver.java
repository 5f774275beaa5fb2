package dev.exactly.idempotency.webflux;

import dev.exactly.idempotency.servlet.HttpProtocol;
import java.security.Principal;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Finds the tenant a request acts for, as the servlet filter's {@code TenantResolver} does, reactively: from
 * the authenticated principal, an API key, or a header only a trusted gateway sets. Empty: no tenant, and a
 * guarded request is refused with 401.
 */
@FunctionalInterface
public interface ReactiveTenantResolver {

    /** The tenant id, or empty. Must not block. */
    Mono<String> resolve(ServerWebExchange exchange);

    /** The name of the authenticated principal ({@link ServerWebExchange#getPrincipal()}, e.g. set by Spring Security). */
    static ReactiveTenantResolver principal() {
        return exchange -> exchange.getPrincipal().map(Principal::getName).filter(name -> !name.isBlank());
    }

    /** {@code Authorization: Bearer <key>} to a tenant; keys held as SHA-256 digests, compared in constant time. */
    static ReactiveTenantResolver apiKeys(Map<String, String> keyToTenant) {
        Function<java.util.List<String>, Optional<String>> tenants = HttpProtocol.apiKeyTenants(keyToTenant);
        return exchange -> Mono.justOrEmpty(
                tenants.apply(exchange.getRequest().getHeaders().getOrEmpty("Authorization")));
    }

    /** A header set by a trusted gateway (overwriting any client value). Only behind such a gateway. */
    static ReactiveTenantResolver trustedHeader(String headerName) {
        Objects.requireNonNull(headerName, "headerName");
        if (headerName.isBlank()) {
            throw new IllegalArgumentException("headerName must not be blank");
        }
        return exchange -> Mono.justOrEmpty(HttpProtocol.trustedHeaderTenant(
                exchange.getRequest().getHeaders().getOrEmpty(headerName)));
    }

    /** Every request belongs to {@code tenant} (single-tenant deployments). */
    static ReactiveTenantResolver single(String tenant) {
        if (tenant.isBlank()) {
            throw new IllegalArgumentException("tenant must not be blank");
        }
        Mono<String> fixed = Mono.just(tenant);
        return exchange -> fixed;
    }

    /** This resolver, or {@code fallback} when this one finds no tenant. */
    default ReactiveTenantResolver orElse(ReactiveTenantResolver fallback) {
        Objects.requireNonNull(fallback, "fallback");
        return exchange -> resolve(exchange).switchIfEmpty(Mono.defer(() -> fallback.resolve(exchange)));
    }
}
