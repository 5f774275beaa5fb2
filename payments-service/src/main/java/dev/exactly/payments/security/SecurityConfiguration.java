package dev.exactly.payments.security;

import dev.exactly.payments.config.PaymentsProperties;
import dev.exactly.payments.web.ApiProblems;
import jakarta.servlet.DispatcherType;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.authentication.AuthenticationManager;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.config.observation.SecurityObservationSettings;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.access.AccessDeniedHandler;
import org.springframework.security.web.access.ExceptionTranslationFilter;
import org.springframework.security.web.context.RequestAttributeSecurityContextRepository;
import org.springframework.security.web.firewall.RequestRejectedHandler;

/**
 * Access to the API, decided by Spring Security on the path the dispatcher routes:
 *
 * <ul>
 *   <li>its firewall ({@code StrictHttpFirewall}) first refuses any path that is not in canonical form —
 *       encoded {@code /}, {@code \} or {@code .}, {@code ;} parameters, {@code //}, {@code .} and
 *       {@code ..} segments, control characters — with 400 {@code request-rejected}, so no spelling can
 *       mean one path to authorisation and another to the dispatcher;</li>
 *   <li>{@code /v1/operator/**} needs the operator key, every other {@code /v1/**} a tenant's key
 *       (the operator key does not act for a tenant);</li>
 *   <li>the checkout page's static files, the OpenAPI document and health are public (GET);</li>
 *   <li>every other Actuator endpoint ({@code /actuator/prometheus}, ...) needs the operator key;</li>
 *   <li>anything else needs some API key (then it is 404 or 405 where nothing is there).</li>
 * </ul>
 * A missing or unknown key is 401 with {@code WWW-Authenticate: Bearer}, a key without the role 403,
 * both as problem documents. The controllers check the caller again ({@link Caller#of}).
 */
@Configuration(proxyBeanMethods = false)
@EnableWebSecurity
public class SecurityConfiguration {
    /** Public paths (GET only): the checkout page, its files and its demo settings, the OpenAPI document, health. */
    static final String[] PUBLIC_GET = {
        "/",
        "/index.html",
        "/assets/**",
        "/js/**",
        "/favicon.ico",
        "/demo/settings",
        "/openapi.yaml",
        "/actuator/health",
        "/actuator/health/**"
    };

    @Bean
    ApiKeys apiKeys(PaymentsProperties properties) {
        return new ApiKeys(properties.allApiKeys(), properties.effectiveOperatorKey());
    }

    @Bean
    SecurityFilterChain apiSecurity(HttpSecurity http, ApiKeys keys) throws Exception {
        AuthenticationEntryPoint unauthorized = (request, response, failure) -> {
            response.setHeader(
                    "WWW-Authenticate",
                    failure instanceof BadCredentialsException ? "Bearer error=\"invalid_token\"" : "Bearer");
            ProblemWriter.write(
                    response,
                    ApiProblems.unauthorized(
                            failure instanceof BadCredentialsException
                                    ? "the API key is not valid; send 'Authorization: Bearer <key>'"
                                    : "this endpoint needs an API key: send 'Authorization: Bearer <key>'"));
        };
        AccessDeniedHandler forbidden = (request, response, denied) -> {
            Authentication caller = SecurityContextHolder.getContextHolderStrategy()
                    .getContext()
                    .getAuthentication();
            boolean operator =
                    caller instanceof ApiKeyAuthentication key && key.caller().operator();
            ProblemWriter.write(
                    response,
                    operator
                            ? ApiProblems.forbidden("the operator key does not act for a tenant", "tenant_only")
                            : ApiProblems.forbidden("operator endpoints need the operator key", "operator_only"));
        };
        http.csrf(csrf -> csrf.disable())
                .httpBasic(basic -> basic.disable())
                .formLogin(form -> form.disable())
                .logout(logout -> logout.disable())
                .requestCache(cache -> cache.disable())
                // a bearer API keeps no session: no session filter, no URL rewriting filter, and the
                // authentication lives in the request alone
                .sessionManagement(session -> session.disable())
                .securityContext(
                        context -> context.securityContextRepository(new RequestAttributeSecurityContextRepository()))
                // a request without a key has no authentication at all (not an anonymous one): authorization
                // answers 401 for it as before, through the same entry point
                .anonymous(anonymous -> anonymous.disable())
                .addFilterBefore(new BearerApiKeyFilter(keys, unauthorized), ExceptionTranslationFilter.class)
                .exceptionHandling(exceptions ->
                        exceptions.authenticationEntryPoint(unauthorized).accessDeniedHandler(forbidden))
                .authorizeHttpRequests(requests -> requests.dispatcherTypeMatchers(DispatcherType.ERROR)
                        .permitAll()
                        .requestMatchers("/v1/operator", "/v1/operator/**")
                        .hasRole(ApiKeyAuthentication.OPERATOR)
                        .requestMatchers("/v1/**")
                        .hasRole(ApiKeyAuthentication.TENANT)
                        .requestMatchers(HttpMethod.GET, PUBLIC_GET)
                        .permitAll()
                        .requestMatchers("/actuator", "/actuator/**")
                        .hasRole(ApiKeyAuthentication.OPERATOR)
                        .anyRequest()
                        .authenticated());
        return http.build();
    }

    /**
     * Requests are observed whole ({@code http.server.requests}) and per guarded execution
     * ({@code exactly.idempotency}), not per security filter, authentication and authorization: with
     * these settings the filter chain is not wrapped in an observation per filter (a name, a context and
     * a scope each, on every request).
     */
    @Bean
    SecurityObservationSettings securityObservations() {
        return SecurityObservationSettings.noObservations();
    }

    /** Paths the firewall refuses get a problem document, not the container's error page. */
    @Bean
    RequestRejectedHandler requestRejectedHandler() {
        return (request, response, rejected) -> ProblemWriter.write(response, ApiProblems.requestRejected());
    }

    /**
     * Authentication is the API key filter's alone: this manager accepts nothing, and its presence keeps
     * Spring Boot from making up a default user with a generated password.
     */
    @Bean
    AuthenticationManager noPasswordLogins() {
        return authentication -> {
            throw new BadCredentialsException("only API keys authenticate");
        };
    }
}
