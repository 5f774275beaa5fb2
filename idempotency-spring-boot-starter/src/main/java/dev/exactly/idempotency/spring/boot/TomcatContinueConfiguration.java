package dev.exactly.idempotency.spring.boot;

import org.apache.coyote.ContinueResponseTiming;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * On embedded Tomcat, {@code Expect: 100-continue} (RFC 9110 §10.1.1) is answered when the request's body is
 * first read, not as soon as its headers are parsed: the guard refuses some requests on their headers alone (no
 * or an invalid idempotency key, no tenant, a declared body over the limit), and a client that was told to
 * continue sends the whole body first, for nothing. Tomcat's default ({@code immediately}) is replaced; a value
 * the application set itself is left alone, and {@code exactly.idempotency.continue-on-read=false} turns this off.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(
        name = {
            "org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory",
            "org.apache.coyote.http11.AbstractHttp11Protocol"
        })
@ConditionalOnProperty(prefix = IdempotencyProperties.PREFIX, name = "continue-on-read", matchIfMissing = true)
class TomcatContinueConfiguration {
    /** Tomcat's default timing, the only one this replaces. */
    static final String TOMCAT_DEFAULT = ContinueResponseTiming.IMMEDIATELY.toString();

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> idempotencyContinueOnRead() {
        return factory -> factory.addConnectorCustomizers(connector -> {
            if (connector.getProtocolHandler() instanceof AbstractHttp11Protocol<?> http11
                    && TOMCAT_DEFAULT.equals(http11.getContinueResponseTiming())) {
                http11.setContinueResponseTiming(ContinueResponseTiming.ON_REQUEST_BODY_READ.toString());
            }
        });
    }
}
