package dev.exactly.payments.api;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Who sent a request, as its API key says: a tenant, or the operator.
 *
 * @param tenant   the tenant id; {@code null} for the operator
 * @param operator whether this is the operator key
 */
public record Caller(@Nullable String tenant, boolean operator) {
    /** The request attribute holding the caller. */
    public static final String ATTRIBUTE = Caller.class.getName();

    public static Caller tenant(String tenant) {
        return new Caller(tenant, false);
    }

    public static Caller operatorKey() {
        return new Caller(null, true);
    }

    /** The authenticated caller of a request that passed {@link ApiKeyAuthFilter}. */
    public static Caller of(HttpServletRequest request) {
        Object caller = request.getAttribute(ATTRIBUTE);
        if (!(caller instanceof Caller c)) {
            throw new IllegalStateException("the request did not pass the API key filter");
        }
        return c;
    }

    /** The tenant, for endpoints only tenants reach. */
    public String requireTenant() {
        if (tenant == null) {
            throw new IllegalStateException("not a tenant");
        }
        return tenant;
    }
}
