package dev.exactly.payments.config;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;

/**
 * Lets {@code REDIS_URL} (property {@code exactly.payments.redis-url}) choose the hot tier: when it is
 * set, {@code exactly.idempotency.store} defaults to {@code redis} and {@code exactly.idempotency.redis.uri}
 * to it; otherwise the hot tier stays in memory. Explicit {@code exactly.idempotency.*} settings win: this
 * source is consulted last, and it is evaluated on every lookup, so properties added after startup
 * preparation (a test's dynamic properties) count too.
 */
public final class HotTierEnvironment implements EnvironmentPostProcessor {
    static final String REDIS_URL = "exactly.payments.redis-url";
    static final String STORE = "exactly.idempotency.store";
    static final String REDIS_URI = "exactly.idempotency.redis.uri";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        // the source object is a plain description, not the environment: property sources are printed
        // and compared, and one that contains its environment would recurse
        environment.getPropertySources().addLast(new PropertySource<>("paymentsHotTier", "hot tier from " + REDIS_URL) {
            @Override
            public @Nullable Object getProperty(String name) {
                if (!name.equals(STORE) && !name.equals(REDIS_URI)) {
                    return null;
                }
                String url = environment.getProperty(REDIS_URL, "");
                if (url.isBlank()) {
                    return null;
                }
                return name.equals(STORE) ? "redis" : url.strip();
            }
        });
    }
}
