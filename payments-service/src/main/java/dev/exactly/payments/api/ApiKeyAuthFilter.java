package dev.exactly.payments.api;

import dev.exactly.payments.ApiProblems;
import dev.exactly.payments.ApiResponse;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Authenticates every {@code /v1/} request by {@code Authorization: Bearer <api key>}. A tenant's key
 * makes the tenant the request's principal (which the hot tier's tenant resolver reads, so the tenant is
 * part of every idempotency scope) and reaches the tenant endpoints; the operator key reaches only
 * {@code /v1/operator/}. Keys are held as SHA-256 digests and compared in constant time. Runs before the
 * idempotency filter.
 */
public final class ApiKeyAuthFilter implements Filter {
    /** Tenant ids: they become part of ledger account codes and scopes. */
    public static final Pattern TENANT = Pattern.compile("[a-z0-9][a-z0-9_-]{0,39}");
    private static final String BEARER = "bearer ";

    private record Entry(byte[] digest, Caller caller) {}

    private final List<Entry> entries;

    /**
     * @param tenantKeys  API key to tenant id
     * @param operatorKey the operator's key, or empty for none
     */
    public ApiKeyAuthFilter(Map<String, String> tenantKeys, String operatorKey) {
        List<Entry> list = new ArrayList<>();
        tenantKeys.forEach((key, tenant) -> {
            if (key.isBlank() || !TENANT.matcher(tenant).matches()) {
                throw new IllegalArgumentException("API keys must not be blank and tenants must match " + TENANT.pattern()
                        + " (got tenant '" + tenant + "')");
            }
            list.add(new Entry(sha256(key.strip()), Caller.tenant(tenant)));
        });
        if (!operatorKey.isBlank()) {
            if (tenantKeys.containsKey(operatorKey)) {
                throw new IllegalArgumentException("the operator key must differ from every tenant key");
            }
            list.add(new Entry(sha256(operatorKey.strip()), Caller.operatorKey()));
        }
        this.entries = List.copyOf(list);
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        String path = request.getRequestURI();
        if (!path.startsWith("/v1/")) {
            chain.doFilter(req, res);
            return;
        }
        Caller caller = resolve(request);
        if (caller == null) {
            response.setHeader("WWW-Authenticate", "Bearer");
            write(response, ApiProblems.unauthorized("send a valid API key as 'Authorization: Bearer <key>'"));
            return;
        }
        boolean operatorPath = path.startsWith("/v1/operator/") || path.equals("/v1/operator");
        if (operatorPath && !caller.operator()) {
            write(response, ApiProblems.forbidden("operator endpoints need the operator key", "operator_only"));
            return;
        }
        if (!operatorPath && caller.operator()) {
            write(response, ApiProblems.forbidden("the operator key does not act for a tenant", "tenant_only"));
            return;
        }
        request.setAttribute(Caller.ATTRIBUTE, caller);
        String name = caller.operator() ? "operator" : caller.requireTenant();
        chain.doFilter(new AuthenticatedRequest(request, () -> name), res);
    }

    private @Nullable Caller resolve(HttpServletRequest request) {
        List<String> headers = Collections.list(request.getHeaders("Authorization"));
        if (headers.size() != 1) {
            return null;
        }
        String header = headers.getFirst().strip();
        if (header.length() <= BEARER.length() || !header.substring(0, BEARER.length()).toLowerCase(Locale.ROOT).equals(BEARER)) {
            return null;
        }
        byte[] presented = sha256(header.substring(BEARER.length()).strip());
        Caller match = null;
        for (Entry entry : entries) {
            if (MessageDigest.isEqual(presented, entry.digest()) && match == null) {
                match = entry.caller();
            }
        }
        return match;
    }

    /** Writes an answer directly (the request never reaches a controller). */
    static void write(HttpServletResponse response, ApiResponse answer) throws IOException {
        response.setStatus(answer.status());
        response.setContentType(answer.contentType());
        byte[] body = answer.body();
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    private static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    /** The request with the authenticated principal. */
    private static final class AuthenticatedRequest extends HttpServletRequestWrapper {
        private final Principal principal;

        AuthenticatedRequest(HttpServletRequest request, Principal principal) {
            super(request);
            this.principal = principal;
        }

        @Override
        public Principal getUserPrincipal() {
            return principal;
        }

        @Override
        public String getRemoteUser() {
            return principal.getName();
        }
    }
}
