package dev.exactly.examples.plain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestPostgres;
import dev.exactly.testing.TestRedis;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The plain-Java example, started as its own JVM on each store and driven over real HTTP: one charge per
 * key, byte-identical replays, 422 for a reused key, 409 for concurrent duplicates, 400 (keys, JSON too
 * deep), 401, 413, and 503 when the store is down; its output carries no logging-binding warning.
 */
class ChargeServerTest {
    private static final Path LOGS = Path.of("target", "example-runs");
    private static final String API_KEY = "sk_test_4f9a2c";
    private static final Pattern CHARGE_ID = Pattern.compile("\"id\":\"ch_(\\d+)\"");
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @ParameterizedTest(name = "store={0}")
    @ValueSource(strings = {"memory", "redis", "postgres"})
    void chargesOncePerKeyOverHttp(String store) throws Exception {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("example_plain");
        try (ExampleProcess example = ExampleProcess.start(
                LOGS,
                store,
                "store=" + store,
                "redis=" + TestRedis.uri(),
                "jdbc=" + schema.getUrl(),
                "bank-latency=300ms")) {
            String base = "http://127.0.0.1:" + example.port() + "/v1/charges";
            String key = "order-" + UUID.randomUUID();
            String body = "{\"amount\":1000,\"currency\":\"EUR\"}";

            HttpResponse<String> first = post(base, API_KEY, key, body);
            assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
            assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
            long firstCharge = chargeNumber(first);

            HttpResponse<String> retry = post(base, API_KEY, key, "{\"currency\":\"EUR\",\"amount\":1000}");
            assertThat(retry.statusCode()).isEqualTo(201);
            assertThat(retry.body()).isEqualTo(first.body());
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");

            assertProblem(
                    post(base, API_KEY, key, "{\"amount\":2000,\"currency\":\"EUR\"}"), 422, "idempotency_key_reused");
            assertProblem(post(base, API_KEY, null, body), 400, "idempotency_key_missing");
            assertProblem(post(base, API_KEY, "x".repeat(256), body), 400, "idempotency_key_invalid");
            assertProblem(post(base, null, key, body), 401, "tenant_unresolved");
            assertProblem(post(base, "sk_test_unknown", key, body), 401, "tenant_unresolved");
            assertProblem(
                    post(base, API_KEY, "big-" + UUID.randomUUID(), "[" + "1,".repeat(600_000) + "1]"),
                    413,
                    "payload_too_large");
            assertProblem(
                    post(base, API_KEY, "deep-" + UUID.randomUUID(), "[".repeat(10_000) + "]".repeat(10_000)),
                    400,
                    "json_too_deep");

            List<HttpResponse<String>> duplicates = concurrently(20, base, "order-" + UUID.randomUUID(), body);
            List<HttpResponse<String>> created =
                    duplicates.stream().filter(r -> r.statusCode() == 201).toList();
            List<HttpResponse<String>> inUse =
                    duplicates.stream().filter(r -> r.statusCode() == 409).toList();
            assertThat(created.size() + inUse.size()).isEqualTo(20);
            assertThat(created).isNotEmpty();
            assertThat(created.stream().map(HttpResponse::body).collect(Collectors.toSet()))
                    .hasSize(1);
            assertThat(inUse).isNotEmpty().allSatisfy(r -> {
                assertProblem(r, 409, "idempotency_key_in_use");
                assertThat(r.headers().firstValue("Retry-After")).isPresent();
            });
            assertThat(chargeNumber(created.getFirst())).isEqualTo(firstCharge + 1);

            HttpResponse<String> next = post(base, API_KEY, "order-" + UUID.randomUUID(), body);
            assertThat(chargeNumber(next)).as("the 20 duplicates charged once").isEqualTo(firstCharge + 2);

            assertThat(example.output()).doesNotContain("SLF4J").doesNotContain("Exception");
        }
    }

    @Test
    void aStoreThatIsDownFailsClosed() throws Exception {
        try (ExampleProcess example = ExampleProcess.start(
                LOGS, "redis-down", "store=redis", "redis=redis://127.0.0.1:" + TestRedis.freePort())) {
            String base = "http://127.0.0.1:" + example.port() + "/v1/charges";
            HttpResponse<String> down = post(base, API_KEY, "order-" + UUID.randomUUID(), "{\"amount\":1}");
            assertProblem(down, 503, "idempotency_store_unavailable");

            HttpResponse<String> next = post(base, API_KEY, "order-" + UUID.randomUUID(), "{\"amount\":1}");
            assertProblem(next, 503, "idempotency_store_unavailable");
            assertThat(example.output()).doesNotContain("SLF4J");
        }
    }

    @Test
    void theRuntimeClassPathHasTheSlf4j2ApiAndOneProvider() {
        Set<String> jars = Set.of(ExampleProcess.runtimeClassPath().split(java.io.File.pathSeparator)).stream()
                .map(path -> Path.of(path).getFileName().toString())
                .collect(Collectors.toSet());
        assertThat(jars).anySatisfy(jar -> assertThat(jar).startsWith("slf4j-api-2."));
        assertThat(jars)
                .filteredOn(jar -> jar.startsWith("slf4j-") && !jar.startsWith("slf4j-api"))
                .containsExactly("slf4j-jdk14-2.0.17.jar");
        assertThat(jars).anySatisfy(jar -> assertThat(jar).startsWith("lettuce-core-7."));
    }

    private static List<HttpResponse<String>> concurrently(int n, String base, String key, String body)
            throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<HttpResponse<String>>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                futures.add(threads.submit(() -> {
                    start.await();
                    return post(base, API_KEY, key, body);
                }));
            }
            start.countDown();
            List<HttpResponse<String>> responses = new ArrayList<>();
            for (Future<HttpResponse<String>> future : futures) {
                responses.add(future.get());
            }
            return responses;
        }
    }

    private static HttpResponse<String> post(String base, String apiKey, String key, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (apiKey != null) {
            request.header("Authorization", "Bearer " + apiKey);
        }
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static long chargeNumber(HttpResponse<String> response) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        Matcher matcher = CHARGE_ID.matcher(response.body());
        assertThat(matcher.find()).as(response.body()).isTrue();
        return Long.parseLong(matcher.group(1));
    }

    private static void assertProblem(HttpResponse<String> response, int status, String code) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(response.body()).contains("\"code\":\"" + code + "\"");
    }
}
