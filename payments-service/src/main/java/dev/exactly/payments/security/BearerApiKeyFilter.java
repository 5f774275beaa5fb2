package dev.exactly.payments.security;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.context.SecurityContextHolderStrategy;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Turns {@code Authorization: Bearer <api key>} into an {@link ApiKeyAuthentication}. No header: the
 * request goes on without an authentication, and authorisation decides (401 where a key is needed). A header that names
 * no known key, or two headers: 401 at once.
 */
final class BearerApiKeyFilter extends OncePerRequestFilter {
    private final ApiKeys keys;
    private final AuthenticationEntryPoint entryPoint;
    private final SecurityContextHolderStrategy contexts = SecurityContextHolder.getContextHolderStrategy();

    BearerApiKeyFilter(ApiKeys keys, AuthenticationEntryPoint entryPoint) {
        this.keys = keys;
        this.entryPoint = entryPoint;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        List<String> headers = Collections.list(request.getHeaders("Authorization"));
        if (headers.isEmpty()) {
            chain.doFilter(request, response);
            return;
        }
        Optional<Caller> caller = headers.size() == 1 ? keys.fromAuthorization(headers.getFirst()) : Optional.empty();
        if (caller.isEmpty()) {
            contexts.clearContext();
            entryPoint.commence(request, response, new BadCredentialsException("unknown API key"));
            return;
        }
        SecurityContext context = contexts.createEmptyContext();
        context.setAuthentication(new ApiKeyAuthentication(caller.get()));
        contexts.setContext(context);
        chain.doFilter(request, response);
    }
}
