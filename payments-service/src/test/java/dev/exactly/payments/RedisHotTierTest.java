package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestRedis;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Two tiers for real: Redis in front, PostgreSQL behind. Concurrent duplicates charge once; a retry after
 * the hot tier forgot (its keys deleted) still gets the original charge from the durable tier, byte for
 * byte, or 422 for a different payload, and so does a retry after the durable record itself expired. Two
 * instances of the service sharing Redis, PostgreSQL and the processor charge once between them.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RedisHotTierTest extends ServiceTest {
    @Autowired
    Environment environment;

    @Autowired
    dev.exactly.idempotency.redis.RedisIdempotencyStore hotTier;

    /** This class's keys only: other test runs may share the Redis server. */
    private static final String PREFIX = "exactly-pay-test-" + UUID.randomUUID() + ":";

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_redis");
        registry.add("exactly.payments.redis-url", TestRedis::uri);
        registry.add("exactly.idempotency.redis.key-prefix", () -> PREFIX);
        registry.add("exactly.idempotency.in-flight.max-wait", () -> "30s");
        registry.add("server.tomcat.accept-count", () -> "2048");
    }

    @Test
    void hundredKeysTimesTwentyConcurrentDuplicatesChargeExactlyHundredTimes() throws Exception {
        int keys = 100;
        int duplicates = 20;
        String run = UUID.randomUUID().toString().substring(0, 8);
        long entriesBefore = count("SELECT count(*) FROM ledger_entry");
        // waves of keys, each key's 20 duplicates released at once (a wave is 500 concurrent requests)
        int wave = 25;
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int from = 0; from < keys; from += wave) {
                CountDownLatch go = new CountDownLatch(1);
                Map<Integer, List<Future<Answer>>> answers = new HashMap<>();
                for (int k = from; k < from + wave; k++) {
                    String key = "load-" + run + "-" + k;
                    String body = charge(1000 + k, "cus_load_" + k);
                    List<Future<Answer>> sent = new ArrayList<>();
                    for (int d = 0; d < duplicates; d++) {
                        sent.add(pool.submit(() -> {
                            go.await();
                            return post("/v1/charges", ACME, key, body);
                        }));
                    }
                    answers.put(k, sent);
                }
                go.countDown();
                for (List<Future<Answer>> sent : answers.values()) {
                    byte[] first = null;
                    for (Future<Answer> f : sent) {
                        Answer a = f.get(120, TimeUnit.SECONDS);
                        assertThat(a.status()).as(a.text()).isEqualTo(201);
                        if (first == null) {
                            first = a.body();
                        }
                        assertThat(a.body())
                                .as("every duplicate gets the same charge")
                                .isEqualTo(first);
                    }
                }
            }
        }
        List<Map<String, Object>> charges =
                rows("SELECT id FROM payments_charge WHERE customer LIKE 'cus_load_%' AND status = 'succeeded'");
        assertThat(charges).hasSize(keys);
        for (Map<String, Object> row : charges) {
            assertThat(psp().captureCount("exactly_" + row.get("id"))).isEqualTo(1);
        }
        assertThat(psp().captures().stream()
                        .filter(c -> c.idempotencyKey().startsWith("exactly_"))
                        .map(c -> c.idempotencyKey())
                        .filter(k -> charges.stream().anyMatch(r -> k.equals("exactly_" + r.get("id"))))
                        .count())
                .isEqualTo(keys);
        assertThat(count("SELECT count(*) FROM ledger_entry") - entriesBefore).isEqualTo(keys);
        assertLedgerBalanced();
        assertThat(get("/v1/ledger/trial-balance", ACME).json().get("balanced").booleanValue())
                .isTrue();
    }

    @Test
    void aLateRetryAfterTheHotTierForgotGetsTheOriginalChargeOr422() {
        // forgetting the hot tier's keys is what a Redis that evicts does to them: such a Redis is accepted here
        assertThat(hotTier.config().evictionAllowed()).isTrue();
        String body = charge(4200, "cus_late");
        Answer first = post("/v1/charges", ACME, "late-1", body);
        assertThat(first.status()).isEqualTo(201);
        String id = first.json().get("id").stringValue();
        assertThat(hotKeys()).as("the hot tier holds the key").isPositive();

        forgetHotTier();
        assertThat(hotKeys()).isZero();
        Answer late = post("/v1/charges", ACME, "late-1", body);
        assertThat(late.status()).isEqualTo(201);
        assertThat(late.body()).as("byte-identical").isEqualTo(first.body());
        assertThat(late.header("Idempotent-Replayed")).isEqualTo("true");

        forgetHotTier();
        Answer different = post("/v1/charges", ACME, "late-1", charge(4300, "cus_late"));
        assertThat(different.status()).isEqualTo(422);
        assertThat(different.problemType()).isEqualTo("idempotency-key-reused");
        // the mismatch was not recorded by the hot tier: the original payload still replays
        Answer original = post("/v1/charges", ACME, "late-1", body);
        assertThat(original.body()).isEqualTo(first.body());

        // days later: the durable record itself has expired; the charge row still holds the fingerprint
        jdbc.inTransaction(c -> dev.exactly.payments.db.Jdbc.update(
                c, "UPDATE idempotency_records SET expires_at = now() - interval '1 second'", s -> {}));
        forgetHotTier();
        Answer afterExpiry = post("/v1/charges", ACME, "late-1", body);
        assertThat(afterExpiry.status()).isEqualTo(201);
        assertThat(afterExpiry.body()).isEqualTo(first.body());
        forgetHotTier();
        assertThat(post("/v1/charges", ACME, "late-1", charge(1, "cus_late")).status())
                .isEqualTo(422);
        assertThat(get("/v1/idempotency-keys/late-1", ACME)
                        .json()
                        .get("resource")
                        .get("id")
                        .stringValue())
                .isEqualTo(id);

        assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
        assertThat(entriesOf(id)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_late'"))
                .isEqualTo(1);
    }

    @Test
    void twoInstancesSharingRedisAndPostgresChargeOnce() throws Exception {
        Map<String, Object> shared = new HashMap<>();
        for (String name : List.of(
                "exactly.payments.database-url",
                "exactly.payments.redis-url",
                "exactly.idempotency.redis.key-prefix",
                "exactly.idempotency.in-flight.max-wait",
                "exactly.payments.demo")) {
            shared.put(name, environment.getRequiredProperty(name));
        }
        shared.put("exactly.payments.psp-url", psp().baseUri().toString());
        shared.put("server.port", "0");
        // as command-line arguments: they must win over application.yml, as the environment does in production
        String[] args = shared.entrySet().stream()
                .map(e -> "--" + e.getKey() + "=" + e.getValue())
                .toArray(String[]::new);
        try (ConfigurableApplicationContext second =
                new SpringApplicationBuilder(PaymentsApplication.class).run(args)) {
            assertThat(second.getEnvironment().getProperty("exactly.idempotency.store"))
                    .isEqualTo("redis");
            int[] ports = {port, Integer.parseInt(second.getEnvironment().getRequiredProperty("local.server.port"))};
            int keys = 20;
            int duplicates = 10;
            String run = UUID.randomUUID().toString().substring(0, 8);
            CountDownLatch go = new CountDownLatch(1);
            Map<Integer, List<Future<Answer>>> answers = new HashMap<>();
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int k = 0; k < keys; k++) {
                    String key = "two-" + run + "-" + k;
                    String body = charge(700 + k, "cus_two_" + k);
                    List<Future<Answer>> sent = new ArrayList<>();
                    for (int d = 0; d < duplicates; d++) {
                        int target = ports[d % 2];
                        sent.add(pool.submit(() -> {
                            go.await();
                            return postTo(target, key, body);
                        }));
                    }
                    answers.put(k, sent);
                }
                go.countDown();
                for (List<Future<Answer>> sent : answers.values()) {
                    byte[] first = null;
                    for (Future<Answer> f : sent) {
                        Answer a = f.get(120, TimeUnit.SECONDS);
                        assertThat(a.status()).as(a.text()).isEqualTo(201);
                        first = first == null ? a.body() : first;
                        assertThat(a.body()).isEqualTo(first);
                    }
                }
            }
        }
        List<Map<String, Object>> charges = rows("SELECT id FROM payments_charge WHERE customer LIKE 'cus_two_%'");
        assertThat(charges).hasSize(20);
        for (Map<String, Object> row : charges) {
            assertThat(psp().captureCount("exactly_" + row.get("id"))).isEqualTo(1);
            assertThat(entriesOf((String) row.get("id"))).isEqualTo(1);
        }
        assertLedgerBalanced();
    }

    private Answer postTo(int targetPort, String key, String body) {
        return send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + targetPort + "/v1/charges"))
                .timeout(java.time.Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + ACME)
                .header("Idempotency-Key", key)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    private long hotKeys() {
        return withRedis(c -> (long) scan(c).size());
    }

    private void forgetHotTier() {
        withRedis(c -> {
            List<String> keys = scan(c);
            if (!keys.isEmpty()) {
                c.sync().del(keys.toArray(String[]::new));
            }
            return null;
        });
    }

    private static List<String> scan(StatefulRedisConnection<String, String> c) {
        List<String> keys = new ArrayList<>();
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page =
                    c.sync().scan(cursor, ScanArgs.Builder.matches(PREFIX + "*").limit(500));
            keys.addAll(page.getKeys());
            cursor = page;
        } while (!cursor.isFinished());
        return keys;
    }

    private static <T> T withRedis(java.util.function.Function<StatefulRedisConnection<String, String>, T> work) {
        RedisClient client = RedisClient.create(TestRedis.uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            return work.apply(c);
        } finally {
            client.shutdown();
        }
    }
}
