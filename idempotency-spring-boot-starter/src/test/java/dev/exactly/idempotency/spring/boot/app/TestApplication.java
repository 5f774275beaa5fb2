package dev.exactly.idempotency.spring.boot.app;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.web.filter.OncePerRequestFilter;

/** A small payment-like API whose routes the starter guards; the tests drive it over real HTTP. */
@SpringBootApplication
public class TestApplication {

    @Bean
    Handlers handlers() {
        return new Handlers();
    }

    /** Counts requests as they arrive, before the idempotency filter (order 0) sees them. */
    @Bean
    FilterRegistrationBean<OncePerRequestFilter> arrivalCounter(Handlers handlers) {
        FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(new OncePerRequestFilter() {
            @Override
            protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
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
