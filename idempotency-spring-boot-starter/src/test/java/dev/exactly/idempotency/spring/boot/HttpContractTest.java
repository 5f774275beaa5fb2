package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.TestHttp.ACME;
import static dev.exactly.idempotency.spring.boot.TestHttp.GLOBEX;
import static dev.exactly.idempotency.spring.boot.TestHttp.assertProblem;
import static dev.exactly.idempotency.spring.boot.TestHttp.assertReplayOf;
import static dev.exactly.idempotency.spring.boot.TestHttp.body;
import static dev.exactly.idempotency.spring.boot.TestHttp.ref;
import static dev.exactly.idempotency.spring.boot.TestHttp.statistic;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.CLAIMS;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.CONFLICTS;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.LEASE_HOLD;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.LOCK_FAILURE_RATIO;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.MISMATCHES;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.REPLAYS;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.WAITS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.spring.boot.app.Handlers;
import dev.exactly.idempotency.spring.boot.app.TestApplication;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/**
 * What a client sees over real HTTP (Tomcat on a random port, {@link java.net.http.HttpClient}) from a Spring MVC
 * application configured only through {@code exactly.idempotency.*} properties, on virtual threads.
 * Each store's subclass runs the whole contract against that store.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
abstract class HttpContractTest {
    private static final int CONCURRENT = 50;

    @LocalServerPort
    int port;

    TestHttp http;

    @Autowired
    Handlers handlers;

    @Autowired
    MeterRegistry registry;

    /** The store class the health endpoint must name. */
    abstract String storeName();

    @BeforeEach
    void client() {
        http = new TestHttp(port);
    }

    // ------------------------------------------------------------------------------------ the contract

    @Test
    void fiftyConcurrentIdenticalRequestsRunTheHandlerOnceAndTheOthersGet409() throws Exception {
        String ref = ref();
        String key = "k-" + ref;
        double conflictsBefore = count(CONFLICTS, "/v1/charges");
        // the first request holds the key inside the handler; every other one is answered at once
        List<HttpResponse<String>> all = concurrently("/v1/charges", key, ref, done -> done == CONCURRENT - 1);
        assertThat(handlers.runs(ref)).isEqualTo(1);
        List<HttpResponse<String>> created =
                all.stream().filter(r -> r.statusCode() == 201).toList();
        List<HttpResponse<String>> conflicts =
                all.stream().filter(r -> r.statusCode() == 409).toList();
        assertThat(created).hasSize(1);
        assertThat(conflicts).hasSize(CONCURRENT - 1);
        for (HttpResponse<String> conflict : conflicts) {
            assertProblem(conflict, 409, "idempotency_key_in_use");
            assertThat(conflict.headers().firstValue("Retry-After")).hasValue("1");
        }
        assertThat(count(CONFLICTS, "/v1/charges") - conflictsBefore).isEqualTo(CONCURRENT - 1);

        HttpResponse<String> replay = http.post("/v1/charges", key, ACME, body(ref), null);
        assertReplayOf(replay, created.getFirst());
        assertThat(handlers.runs(ref)).isEqualTo(1);
    }

    @Test
    void fiftyConcurrentIdenticalRequestsOnAWaitRouteAllGetTheOneResponse() throws Exception {
        String ref = ref();
        String key = "k-" + ref;
        double replaysBefore = count(REPLAYS, "/v1/transfers");
        double claimsBefore = count(CLAIMS, "/v1/transfers");
        double waitsBefore = timerCount(WAITS, "/v1/transfers", Tag.of("result", "replayed"));
        // every request has reached the server before the first one may finish
        List<HttpResponse<String>> all =
                concurrently("/v1/transfers", key, ref, done -> handlers.arrivals(ref) == CONCURRENT);
        assertThat(handlers.runs(ref)).isEqualTo(1);
        assertThat(all).allSatisfy(r -> assertThat(r.statusCode()).isEqualTo(201));
        assertThat(all.stream().map(HttpResponse::body).distinct()).hasSize(1);
        assertThat(all.stream()
                        .filter(r ->
                                r.headers().firstValue("Idempotent-Replayed").isPresent()))
                .hasSize(CONCURRENT - 1);
        assertThat(count(CLAIMS, "/v1/transfers") - claimsBefore).isEqualTo(1);
        assertThat(count(REPLAYS, "/v1/transfers") - replaysBefore).isEqualTo(CONCURRENT - 1);
        assertThat(timerCount(WAITS, "/v1/transfers", Tag.of("result", "replayed")) - waitsBefore)
                .isPositive()
                .isLessThanOrEqualTo(CONCURRENT - 1);
    }

    /**
     * Sends {@value #CONCURRENT} identical requests at once while the handler of {@code ref} is held, and
     * lets it finish once it runs and {@code release} holds for the number of responses received.
     */
    private List<HttpResponse<String>> concurrently(String path, String key, String ref, IntPredicate release)
            throws Exception {
        handlers.hold(ref);
        AtomicInteger done = new AtomicInteger();
        List<Future<HttpResponse<String>>> responses = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < CONCURRENT; i++) {
                responses.add(clients.submit(() -> {
                    start.await();
                    HttpResponse<String> response = http.post(path, key, ACME, body(ref), ref);
                    done.incrementAndGet();
                    return response;
                }));
            }
            start.countDown();
            await().atMost(Duration.ofSeconds(30)).until(() -> handlers.runs(ref) == 1 && release.test(done.get()));
            handlers.release(ref);
        }
        List<HttpResponse<String>> all = new ArrayList<>();
        for (Future<HttpResponse<String>> response : responses) {
            all.add(response.get());
        }
        return all;
    }

    @Test
    void aReplayIsByteIdenticalAndCarriesOnlyAllowListedHeaders() throws Exception {
        String ref = ref();
        HttpResponse<String> first = http.post("/v1/charges", "k-" + ref, ACME, body(ref), null);
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("X-Other")).isPresent();
        assertThat(first.headers().firstValue("Set-Cookie")).isPresent();
        assertThat(first.headers().firstValue("Idempotency-Expires")).isPresent();

        HttpResponse<String> replay = http.post("/v1/charges", "k-" + ref, ACME, body(ref), null);
        assertReplayOf(replay, first);
        assertThat(replay.headers().firstValue("X-Charge-Trace"))
                .isEqualTo(first.headers().firstValue("X-Charge-Trace"));
        assertThat(replay.headers().firstValue("Content-Type"))
                .hasValueSatisfying(v -> assertThat(v).contains("json"));
        assertThat(replay.headers().firstValue("X-Other")).isEmpty();
        assertThat(replay.headers().firstValue("Set-Cookie")).isEmpty();
        assertThat(handlers.runs(ref)).isEqualTo(1);
    }

    @Test
    void theSameKeyWithADifferentBodyIs422AndDoesNotRun() throws Exception {
        String ref = ref();
        double mismatchesBefore = count(MISMATCHES, "/v1/charges");
        assertThat(http.post("/v1/charges", "k-" + ref, ACME, body(ref), null).statusCode())
                .isEqualTo(201);

        HttpResponse<String> reused =
                http.post("/v1/charges", "k-" + ref, ACME, body(ref).replace("100", "999"), null);
        assertProblem(reused, 422, "idempotency_key_reused");
        assertThat(handlers.runs(ref)).isEqualTo(1);
        assertThat(count(MISMATCHES, "/v1/charges") - mismatchesBefore).isEqualTo(1);
    }

    @Test
    void aMissingKeyIs400AndDoesNotRun() throws Exception {
        String ref = ref();
        HttpResponse<String> response = http.post("/v1/charges", null, ACME, body(ref), null);
        assertProblem(response, 400, "idempotency_key_missing");
        assertThat(handlers.runs(ref)).isZero();
    }

    @Test
    void anOptionalKeyRouteLetsARequestWithoutKeyThroughUnguarded() throws Exception {
        String ref = ref();
        assertThat(http.post("/v1/notes", null, ACME, body(ref), null).statusCode())
                .isEqualTo(201);
        assertThat(http.post("/v1/notes", null, ACME, body(ref), null).statusCode())
                .isEqualTo(201);
        assertThat(handlers.runs(ref)).isEqualTo(2);
    }

    @Test
    void aQuotedKeyAndTheBareKeyAreTheSameKey() throws Exception {
        String ref = ref();
        HttpResponse<String> quoted = http.post("/v1/charges", "\"k-" + ref + "\"", ACME, body(ref), null);
        assertThat(quoted.statusCode()).isEqualTo(201);
        HttpResponse<String> bare = http.post("/v1/charges", "k-" + ref, ACME, body(ref), null);
        assertReplayOf(bare, quoted);
        assertThat(handlers.runs(ref)).isEqualTo(1);
    }

    @Test
    void tenantsWithTheSameKeyNeverShareARecord() throws Exception {
        String ref = ref();
        String key = "shared-" + ref;
        HttpResponse<String> acme = http.post("/v1/charges", key, ACME, body(ref), null);
        HttpResponse<String> globex = http.post("/v1/charges", key, GLOBEX, body(ref), null);
        assertThat(acme.statusCode()).isEqualTo(201);
        assertThat(globex.statusCode()).isEqualTo(201);
        assertThat(globex.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(globex.body()).isNotEqualTo(acme.body());
        assertThat(handlers.runs(ref)).isEqualTo(2);

        assertReplayOf(http.post("/v1/charges", key, ACME, body(ref), null), acme);
        assertReplayOf(http.post("/v1/charges", key, GLOBEX, body(ref), null), globex);

        HttpResponse<String> stranger = http.post("/v1/charges", key, "sk_test_unknown", body(ref), null);
        assertProblem(stranger, 401, "tenant_unresolved");
        assertThat(stranger.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
        assertThat(handlers.runs(ref)).isEqualTo(2);
    }

    @Test
    void aHandlerThatThrowsReleasesTheKeySoTheRetryRuns() throws Exception {
        String ref = ref();
        String body = "{\"ref\":\"" + ref + "\",\"amount\":100,\"explode\":true}";
        double releasedBefore = timerCount(LEASE_HOLD, "/v1/charges", Tag.of("outcome", "released"));

        HttpResponse<String> failed = http.post("/v1/charges", "k-" + ref, ACME, body, null);
        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(handlers.runs(ref)).isEqualTo(1);
        assertThat(timerCount(LEASE_HOLD, "/v1/charges", Tag.of("outcome", "released")) - releasedBefore)
                .isEqualTo(1);

        HttpResponse<String> retried = http.post("/v1/charges", "k-" + ref, ACME, body, null);
        assertThat(retried.statusCode()).isEqualTo(201);
        assertThat(handlers.runs(ref)).isEqualTo(2);
        assertReplayOf(http.post("/v1/charges", "k-" + ref, ACME, body, null), retried);
        assertThat(handlers.runs(ref)).isEqualTo(2);
    }

    @Test
    void aBodyOverTheConfiguredLimitIs413() throws Exception {
        String ref = ref();
        String body = "{\"ref\":\"" + ref + "\",\"pad\":\"" + "x".repeat(5000) + "\"}";
        HttpResponse<String> response = http.post("/v1/charges", "k-" + ref, ACME, body, null);
        assertProblem(response, 413, "payload_too_large");
        assertThat(handlers.runs(ref)).isZero();
    }

    @Test
    void handlersRunOnVirtualThreads() throws Exception {
        String ref = ref();
        assertThat(http.post("/v1/charges", "k-" + ref, ACME, body(ref), null).statusCode())
                .isEqualTo(201);
        assertThat(handlers.ranOnVirtualThread(ref)).isTrue();
    }

    @Test
    void metricsMoveAndAreReadableOverHttpWithoutKeysOrTenants() throws Exception {
        String ref = ref();
        String key = "metric-key-" + ref;
        double claimsBefore = count(CLAIMS, "/v1/charges");
        double replaysBefore = count(REPLAYS, "/v1/charges");
        double holdsBefore = timerCount(LEASE_HOLD, "/v1/charges", Tag.of("outcome", "completed"));

        assertThat(http.post("/v1/charges", key, ACME, body(ref), null).statusCode())
                .isEqualTo(201);
        assertThat(http.post("/v1/charges", key, ACME, body(ref), null).statusCode())
                .isEqualTo(201);

        assertThat(count(CLAIMS, "/v1/charges") - claimsBefore).isEqualTo(1);
        assertThat(count(REPLAYS, "/v1/charges") - replaysBefore).isEqualTo(1);
        assertThat(timerCount(LEASE_HOLD, "/v1/charges", Tag.of("outcome", "completed")) - holdsBefore)
                .isEqualTo(1);
        assertThat(registry.get(CLAIMS)
                        .tags("route", "/v1/charges", "method", "POST", "takeover", "false")
                        .counter()
                        .count())
                .isPositive();

        // the same numbers through the actuator
        double claims = count(CLAIMS, "/v1/charges");
        JsonNode metric = http.getJson("/actuator/metrics/" + CLAIMS + "?tag=route:/v1/charges&tag=method:POST");
        assertThat(metric.get("name").asString()).isEqualTo(CLAIMS);
        assertThat(statistic(metric, "COUNT")).isEqualTo(claims);
        JsonNode hold = http.getJson("/actuator/metrics/" + LEASE_HOLD + "?tag=route:/v1/charges");
        assertThat(statistic(hold, "COUNT")).isGreaterThanOrEqualTo(1);
        JsonNode ratio = http.getJson("/actuator/metrics/" + LOCK_FAILURE_RATIO + "?tag=route:/v1/charges");
        assertThat(statistic(ratio, "VALUE")).isBetween(0.0, 1.0);

        // never a key or a tenant in a tag
        List<Meter> ours = registry.getMeters().stream()
                .filter(m -> m.getId().getName().startsWith("exactly.idempotency."))
                .toList();
        assertThat(ours).isNotEmpty();
        Set<String> tagKeys = ours.stream()
                .flatMap(m -> m.getId().getTags().stream())
                .map(Tag::getKey)
                .collect(Collectors.toSet());
        // phi: the percentile gauges Micrometer publishes for the timers
        assertThat(tagKeys)
                .isSubsetOf("route", "method", "takeover", "outcome", "waited", "result", "reason", "exception", "phi");
        assertThat(ours.stream().flatMap(m -> m.getId().getTags().stream()).map(Tag::getValue))
                .noneMatch(v -> v.contains(key) || v.contains("acme") || v.contains("sk_test"));
    }

    @Test
    void theHealthEndpointShowsTheStore() throws Exception {
        HttpResponse<String> response = http.get("/actuator/health");
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode idempotency = TestHttp.healthComponent(response);
        assertThat(idempotency.get("status").asString()).isEqualTo("UP");
        assertThat(idempotency.get("details").get("store").asString()).contains(storeName());
    }

    // ------------------------------------------------------------------------------------ helpers

    /** The sum of a counter's series on one route. */
    double count(String name, String route) {
        return registry.find(name).tag("route", route).counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }

    double timerCount(String name, String route, Tag tag) {
        return registry.find(name).tag("route", route).tags(List.of(tag)).timers().stream()
                .mapToDouble(t -> t.count())
                .sum();
    }
}
