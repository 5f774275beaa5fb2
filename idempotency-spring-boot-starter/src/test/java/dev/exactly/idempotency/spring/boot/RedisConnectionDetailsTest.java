package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.StartupFailures.problems;
import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * With {@code store=redis} and no {@code exactly.idempotency.redis.uri}, the store connects where Spring
 * Boot's Redis connection details say: {@code spring.data.redis.*}, or a {@link DataRedisConnectionDetails}
 * bean, which is what {@code @ServiceConnection} and Docker Compose support register. Each test proves
 * where the record went by reading it back from that Redis database with a client of its own.
 */
class RedisConnectionDetailsTest {
    private final String prefix = "starter-details:" + UUID.randomUUID() + ":";
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(DataRedisAutoConfiguration.class, IdempotencyAutoConfiguration.class))
            .withPropertyValues(
                    "exactly.idempotency.routes[0].path=/v1/charges",
                    "exactly.idempotency.store=redis",
                    "exactly.idempotency.redis.key-prefix=" + prefix);

    @Test
    void springDataRedisPropertiesAreUsedWhenNoUriIsSet() {
        runner.withPropertyValues(
                        "spring.data.redis.host=" + TestRedis.host(),
                        "spring.data.redis.port=" + TestRedis.port(),
                        "spring.data.redis.database=3")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(RedisIdempotencyStore.class);
                    guardOneCall(context);
                    assertThat(keysIn(3)).as("the record is in database 3").isNotEmpty();
                    assertThat(keysIn(0)).as("and nowhere else").isEmpty();
                });
    }

    /** {@code @ServiceConnection} registers such a bean; it wins over the properties, as in Spring Boot. */
    @Test
    void aConnectionDetailsBeanIsUsedAsServiceConnectionRegistersIt() {
        runner.withPropertyValues("spring.data.redis.port=" + TestRedis.freePort())
                .withBean(DataRedisConnectionDetails.class, () -> new DataRedisConnectionDetails() {
                    @Override
                    public Standalone getStandalone() {
                        return Standalone.of(TestRedis.host(), TestRedis.port(), 5);
                    }
                })
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    guardOneCall(context);
                    assertThat(keysIn(5)).isNotEmpty();
                });
    }

    @Test
    void theUriWinsOverSpringBootsConnection() {
        runner.withPropertyValues(
                        "exactly.idempotency.redis.uri=redis://" + TestRedis.host() + ":" + TestRedis.port() + "/6",
                        "spring.data.redis.port=" + TestRedis.freePort())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    guardOneCall(context);
                    assertThat(keysIn(6)).isNotEmpty();
                });
    }

    @Test
    void aStaticMasterReplicaConnectionIsRefusedAtStartup() {
        runner.withBean(DataRedisConnectionDetails.class, () -> new DataRedisConnectionDetails() {
                    @Override
                    public MasterReplica getMasterReplica() {
                        return () -> List.of(new Node(TestRedis.host(), TestRedis.port()));
                    }
                })
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .contains("static master/replica set")
                        .contains("set exactly.idempotency.redis.uri"));
    }

    /** One guarded call through the engine the starter built: its record lands in the store's Redis. */
    private static void guardOneCall(AssertableWebApplicationContext context) throws Exception {
        IdempotencyEngine engine = context.getBean(IdempotencyEngine.class);
        Scope scope = new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("k-" + UUID.randomUUID()));
        IdempotencyRequest request =
                IdempotencyRequest.of(scope, new Fingerprint("sha256-raw", "f"), IdempotencyPolicy.ofDefaults());
        IdempotentResult result =
                engine.execute(request, lease -> Outcome.complete(StoredResponse.of(201, new byte[0])));
        assertThat(result.kind()).isEqualTo(IdempotentResult.Kind.EXECUTED);
    }

    private List<String> keysIn(int database) {
        RedisClient client = RedisClient.create(RedisURI.builder()
                .withHost(TestRedis.host())
                .withPort(TestRedis.port())
                .withDatabase(database)
                .build());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            List<String> keys = connection.sync().keys(prefix + "*");
            if (!keys.isEmpty()) {
                connection.sync().del(keys.toArray(String[]::new));
            }
            return keys;
        } finally {
            client.shutdown();
        }
    }
}
