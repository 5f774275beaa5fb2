package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresStoreConfig;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import java.io.InputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.support.SpringApplicationJsonEnvironmentPostProcessor;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The property defaults are the library's, and IDEs get metadata (names, types, defaults) for all of them. */
class ConfigurationMetadataTest {

    @Test
    void propertyDefaultsAreTheLibraryDefaults() {
        IdempotencyProperties properties = new IdempotencyProperties();
        IdempotencyPolicy defaults = PropertiesReader.defaultPolicy(properties);
        assertThat(defaults).isEqualTo(IdempotencyPolicy.ofDefaults());
        assertThat(properties.getInFlight().getMaxWait()).isEqualTo(Duration.ofSeconds(5));
        assertThat(properties.getMaxRequestBodySize().toBytes()).isEqualTo(Fingerprinter.DEFAULT_MAX_BODY_BYTES);
        assertThat(properties.getMaxStoredResponseSize().toBytes())
                .isEqualTo(IdempotencyFilter.DEFAULT_MAX_STORED_RESPONSE_BYTES);
        assertThat(properties.getStoreUnavailableRetryAfter())
                .isEqualTo(IdempotencyFilter.DEFAULT_STORE_UNAVAILABLE_RETRY_AFTER);
        assertThat(properties.getTenant().getChallenge()).isEqualTo(IdempotencyFilter.DEFAULT_CHALLENGE);
        assertThat(properties.getMemory().getMaxEntries()).isEqualTo(InMemoryIdempotencyStore.DEFAULT_MAX_ENTRIES);
        assertThat(RedisStores.config(properties.getRedis())).isEqualTo(RedisStoreConfig.ofDefaults());
        assertThat(PostgresStores.config(properties.getPostgres())).isEqualTo(PostgresStoreConfig.ofDefaults());
        assertThat(PropertiesReader.problems(properties)).isEmpty();
        assertThat(defaults.inFlight()).isEqualTo(InFlightPolicy.reject(Duration.ofSeconds(1)));
        assertThat(defaults.lease()).isEqualTo(Duration.ofSeconds(10));
        assertThat(defaults.keepAlive()).isEqualTo(dev.exactly.idempotency.KeepAlive.ofDefaults());
    }

    /** The documented way to keep API keys out of files: the whole map in SPRING_APPLICATION_JSON, verbatim. */
    @Test
    void apiKeysBindVerbatimFromSpringApplicationJson() {
        StandardEnvironment environment = new StandardEnvironment();
        environment
                .getPropertySources()
                .addFirst(
                        new MapPropertySource(
                                "test",
                                Map.of(
                                        "spring.application.json",
                                        "{\"exactly\":{\"idempotency\":{\"tenant\":{\"api-keys\":{\"sk_live_A.b-C9\":\"acme\"}}}}}")));
        new SpringApplicationJsonEnvironmentPostProcessor()
                .postProcessEnvironment(environment, new SpringApplication());
        IdempotencyProperties properties = Binder.get(environment)
                .bind(IdempotencyProperties.PREFIX, IdempotencyProperties.class)
                .get();
        assertThat(properties.getTenant().getApiKeys()).containsExactly(Map.entry("sk_live_A.b-C9", "acme"));
    }

    @Test
    void metadataDescribesEveryPropertyWithItsDefault() throws Exception {
        JsonNode metadata;
        try (InputStream in =
                getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            metadata = JsonMapper.builder().build().readTree(in);
        }
        Map<String, JsonNode> properties = new HashMap<>();
        for (JsonNode property : metadata.get("properties")) {
            properties.put(property.get("name").asString(), property);
        }
        assertThat(properties.values()).allSatisfy(p -> {
            assertThat(p.get("name").asString())
                    .matches("exactly\\.idempotency\\..+|management\\.endpoint\\.idempotency\\.access");
            assertThat(p.get("description").asString()).isNotBlank();
        });
        // the operators' endpoint is off unless granted
        assertThat(properties
                        .get("management.endpoint.idempotency.access")
                        .get("defaultValue")
                        .asString())
                .isEqualTo("none");
        Map<String, String> defaults = Map.ofEntries(
                Map.entry("exactly.idempotency.enabled", "true"),
                Map.entry("exactly.idempotency.store", "memory"),
                Map.entry("exactly.idempotency.lease", "10s"),
                Map.entry("exactly.idempotency.keep-alive.enabled", "true"),
                Map.entry("exactly.idempotency.keep-alive.max-hold", "5m"),
                Map.entry("exactly.idempotency.retention", "24h"),
                Map.entry("exactly.idempotency.in-flight.policy", "reject"),
                Map.entry("exactly.idempotency.in-flight.retry-after", "1s"),
                Map.entry("exactly.idempotency.in-flight.max-wait", "5s"),
                Map.entry("exactly.idempotency.max-request-body-size", "1MB"),
                Map.entry("exactly.idempotency.max-stored-response-size", "1MB"),
                Map.entry("exactly.idempotency.tenant.mode", "principal"),
                Map.entry("exactly.idempotency.redis.key-prefix", RedisStoreConfig.DEFAULT_KEY_PREFIX),
                Map.entry("exactly.idempotency.redis.eviction-allowed", "false"),
                Map.entry("exactly.idempotency.when-store-unavailable", "refuse"),
                Map.entry("exactly.idempotency.postgres.migrate", "false"),
                Map.entry("exactly.idempotency.postgres.table-name", PostgresStoreConfig.DEFAULT_TABLE_NAME),
                Map.entry(
                        "exactly.idempotency.postgres.shared-statement-lanes",
                        String.valueOf(PostgresStoreConfig.ofDefaults().sharedStatementLanes())),
                Map.entry(
                        "exactly.idempotency.postgres.max-shared-writes",
                        String.valueOf(PostgresStoreConfig.ofDefaults().maxSharedWrites())));
        defaults.forEach((name, value) -> assertThat(
                        properties.get(name).get("defaultValue").asString())
                .as(name)
                .isEqualTo(value));
        assertThat(properties)
                .containsKeys(
                        "exactly.idempotency.routes",
                        "exactly.idempotency.tenant.api-keys",
                        "exactly.idempotency.tenant.header",
                        "exactly.idempotency.redis.uri",
                        "exactly.idempotency.replay-headers",
                        "exactly.idempotency.metrics.enabled");
    }
}
