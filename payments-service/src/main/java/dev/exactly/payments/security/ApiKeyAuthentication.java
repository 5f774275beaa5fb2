package dev.exactly.payments.security;

import java.util.List;
import org.springframework.security.authentication.AbstractAuthenticationToken;
import org.springframework.security.core.authority.SimpleGrantedAuthority;

/**
 * An authenticated API key: the {@link Caller} is the principal, its role is {@value #TENANT} or
 * {@value #OPERATOR}, and its name (what {@code getUserPrincipal().getName()} returns, and hence the
 * tenant the idempotency layer scopes keys by) is the tenant id or {@code operator}. Holds no
 * credentials: the key itself is never kept.
 */
public final class ApiKeyAuthentication extends AbstractAuthenticationToken {
    /** Role of a tenant's key. */
    public static final String TENANT = "TENANT";
    /** Role of the operator key. */
    public static final String OPERATOR = "OPERATOR";

    private static final List<SimpleGrantedAuthority> TENANT_AUTHORITIES =
            List.of(new SimpleGrantedAuthority("ROLE_" + TENANT));
    private static final List<SimpleGrantedAuthority> OPERATOR_AUTHORITIES =
            List.of(new SimpleGrantedAuthority("ROLE_" + OPERATOR));

    private final Caller caller;

    ApiKeyAuthentication(Caller caller) {
        super(caller.operator() ? OPERATOR_AUTHORITIES : TENANT_AUTHORITIES);
        this.caller = caller;
        setAuthenticated(true);
    }

    public Caller caller() {
        return caller;
    }

    @Override
    public Caller getPrincipal() {
        return caller;
    }

    @Override
    public Object getCredentials() {
        return "";
    }

    @Override
    public String getName() {
        return caller.name();
    }
}
