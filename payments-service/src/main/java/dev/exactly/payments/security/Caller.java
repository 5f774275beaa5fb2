package dev.exactly.payments.security;

import dev.exactly.payments.web.ApiException;
import dev.exactly.payments.web.ApiProblems;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import org.jspecify.annotations.Nullable;

/**
 * Who sent a request, as its API key says: a tenant, or the operator.
 *
 * @param tenant   the tenant id; {@code null} for the operator
 * @param operator whether this is the operator key
 */
public record Caller(@Nullable String tenant, boolean operator) {
    /** The principal name of the operator (tenants are named by their id). */
    public static final String OPERATOR_NAME = "operator";

    public static Caller tenant(String tenant) {
        return new Caller(tenant, false);
    }

    public static Caller operatorKey() {
        return new Caller(null, true);
    }

    /** The principal name: the tenant id, or {@value #OPERATOR_NAME}. */
    public String name() {
        return tenant != null ? tenant : OPERATOR_NAME;
    }

    /**
     * The authenticated caller of a request. Access was decided before the request got here; this is the
     * controllers' own check (defence in depth): a request without an API key authentication is 401.
     */
    public static Caller of(HttpServletRequest request) {
        Principal principal = request.getUserPrincipal();
        if (principal instanceof ApiKeyAuthentication authentication) {
            return authentication.caller();
        }
        throw new ApiException(ApiProblems.unauthorized("send a valid API key as 'Authorization: Bearer <key>'"));
    }

    /** The tenant, for endpoints only tenants reach; the operator is refused (403). */
    public String requireTenant() {
        if (tenant == null) {
            throw new ApiException(ApiProblems.forbidden("the operator key does not act for a tenant", "tenant_only"));
        }
        return tenant;
    }

    /** Refuses (403) anyone but the operator. */
    public Caller requireOperator() {
        if (!operator) {
            throw new ApiException(ApiProblems.forbidden("operator endpoints need the operator key", "operator_only"));
        }
        return this;
    }
}
