package dev.exactly.idempotency.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds the tenant a request acts for. The tenant is part of every key's scope, so two tenants that
 * send the same {@code Idempotency-Key} never see each other's responses. A guarded request whose
 * tenant cannot be resolved is refused with 401 ({@link Problems#tenantUnresolved()}).
 *
 * <p>The tenant must come from something the client cannot choose freely: the authenticated principal
 * ({@link #principal()}), a credential ({@link #apiKeys(Map)}), or a header set by a trusted gateway
 * ({@link #trustedHeader(String)}, which must be chosen explicitly).
 */
@FunctionalInterface
public interface TenantResolver {

    /** The tenant id, or empty when the request carries none (an empty or blank id counts as none). */
    Optional<String> resolve(HttpServletRequest request);

    /**
     * The name of the authenticated principal ({@link HttpServletRequest#getUserPrincipal()}), as set
     * by the container or a security filter that runs before the idempotency filter.
     */
    static TenantResolver principal() {
        return request -> {
            Principal principal = request.getUserPrincipal();
            return principal == null ? Optional.empty() : nonBlank(principal.getName());
        };
    }

    /**
     * Maps an API key sent as {@code Authorization: Bearer <key>} to a tenant. Keys are kept only as
     * SHA-256 digests and compared in constant time; the key itself never becomes part of a scope or a
     * log line (only the mapped tenant does).
     *
     * @param keyToTenant API key to tenant id; copied
     */
    static TenantResolver apiKeys(Map<String, String> keyToTenant) {
        return new ApiKeyTenantResolver(keyToTenant);
    }

    /**
     * Reads the tenant from a request header. <strong>Only for deployments behind a gateway that
     * authenticates the caller and sets (overwriting any client value) this header</strong>: a client
     * that can reach the application directly could otherwise pick any tenant and read its replays. A
     * header sent several times, or holding anything but 1-255 printable ASCII characters, resolves to
     * no tenant.
     */
    static TenantResolver trustedHeader(String headerName) {
        Objects.requireNonNull(headerName, "headerName");
        if (headerName.isBlank()) {
            throw new IllegalArgumentException("headerName must not be blank");
        }
        return request -> HttpProtocol.trustedHeaderTenant(Collections.list(request.getHeaders(headerName)));
    }

    /**
     * Every request belongs to {@code tenant}. Only for single-tenant deployments: all callers then
     * share one key space.
     */
    static TenantResolver single(String tenant) {
        Optional<String> fixed = nonBlank(tenant);
        if (fixed.isEmpty()) {
            throw new IllegalArgumentException("tenant must not be blank");
        }
        return request -> fixed;
    }

    /** This resolver, or {@code fallback} when this one finds no tenant. */
    default TenantResolver orElse(TenantResolver fallback) {
        Objects.requireNonNull(fallback, "fallback");
        return request -> {
            Optional<String> tenant = resolve(request);
            return tenant.isPresent() ? tenant : fallback.resolve(request);
        };
    }

    private static Optional<String> nonBlank(String value) {
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value);
    }
}
