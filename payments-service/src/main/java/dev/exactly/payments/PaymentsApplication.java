package dev.exactly.payments;

import dev.exactly.payments.config.PaymentsProperties;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The payment service. With no configuration it runs on an embedded PostgreSQL, an in-memory hot tier
 * and an in-process processor stand-in, and prints its URL and the demo tenants' API keys.
 */
@SpringBootApplication
public class PaymentsApplication {

    public static void main(String[] args) {
        SpringApplication.run(PaymentsApplication.class, args);
    }

    /** Prints where the service listens and, in demo mode, the keys to call it with. */
    @Bean
    ApplicationListener<ApplicationReadyEvent> startupBanner(PaymentsProperties properties, Environment environment) {
        return event -> {
            String port = environment.getProperty("local.server.port", environment.getProperty("server.port", "8080"));
            StringBuilder out = new StringBuilder();
            out.append("\nExactly payments service ready at http://localhost:")
                    .append(port)
                    .append('\n');
            out.append("  OpenAPI:  http://localhost:").append(port).append("/openapi.yaml\n");
            if (properties.demoMode()) {
                Map<String, String> keys = new TreeMap<>(PaymentsProperties.DEMO_KEYS);
                keys.forEach((key, tenant) -> out.append("  demo tenant ")
                        .append(tenant)
                        .append(":  Authorization: Bearer ")
                        .append(key)
                        .append('\n'));
                out.append("  operator:  Authorization: Bearer ")
                        .append(properties.effectiveOperatorKey())
                        .append('\n');
            }
            System.out.print(out);
            System.out.flush();
        };
    }
}
