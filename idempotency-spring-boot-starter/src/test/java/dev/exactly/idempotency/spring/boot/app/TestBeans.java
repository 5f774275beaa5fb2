package dev.exactly.idempotency.spring.boot.app;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.filter.OncePerRequestFilter;

/** What the test applications share: the handlers' book and a filter that counts arrivals. */
@Configuration(proxyBeanMethods = false)
public class TestBeans {

    @Bean
    Handlers handlers() {
        return new Handlers();
    }

    /** Counts requests as they arrive, before the idempotency filter (order 0) sees them. */
    @Bean
    FilterRegistrationBean<OncePerRequestFilter> arrivalCounter(Handlers handlers) {
        FilterRegistrationBean<OncePerRequestFilter> registration =
                new FilterRegistrationBean<>(new OncePerRequestFilter() {
                    @Override
                    protected void doFilterInternal(
                            HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                            throws ServletException, IOException {
                        String ref = request.getHeader(Handlers.REF_HEADER);
                        if (ref != null) {
                            handlers.arrived(ref);
                        }
                        chain.doFilter(request, response);
                    }
                });
        registration.setOrder(-10);
        return registration;
    }
}
