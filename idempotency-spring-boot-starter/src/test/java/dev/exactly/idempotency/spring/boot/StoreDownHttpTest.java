package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.STORE_ERRORS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.spring.boot.app.Handlers;
import dev.exactly.idempotency.spring.boot.app.TestApplication;
import dev.exactly.testing.TestRedis;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * A Redis store on a port where nothing listens: the application still starts (the store connects on
 * first use), a guarded request fails closed with 503 without calling the handler, the failure is
 * counted and logged, and the health endpoint reports the store DOWN and why.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class StoreDownHttpTest {

    @DynamicPropertySource
    static void closedPort(DynamicPropertyRegistry registry) {
        redisOnAClosedPort(registry);
    }

    /** A Redis store on a free port where nothing listens, with short timeouts. */
    static void redisOnAClosedPort(DynamicPropertyRegistry registry) {
        registry.add("exactly.idempotency.store", () -> "redis");
        registry.add("exactly.idempotency.redis.uri", () -> "redis://127.0.0.1:" + TestRedis.freePort());
        registry.add("exactly.idempotency.redis.connect-timeout", () -> "500ms");
        registry.add("exactly.idempotency.redis.command-timeout", () -> "500ms");
    }

    @LocalServerPort
    int port;

    @Autowired
    Handlers handlers;

    @Autowired
    MeterRegistry registry;

    TestHttp http;

    @BeforeEach
    void client() {
        http = new TestHttp(port);
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aGuardedRequestIs503AndTheHandlerIsNotCalled(CapturedOutput output) throws Exception {
        String ref = TestHttp.ref();
        double errorsBefore = storeErrors();
        HttpResponse<String> response = http.post("/v1/charges", "k-" + ref, TestHttp.ACME, TestHttp.body(ref), null);

        TestHttp.assertProblem(response, 503, "idempotency_store_unavailable");
        assertThat(response.headers().firstValue("Retry-After")).hasValue("2");
        assertThat(handlers.runs(ref)).isZero();
        assertThat(storeErrors() - errorsBefore).isGreaterThanOrEqualTo(1);
        assertThat(registry.find(STORE_ERRORS).tag("route", "/v1/charges").counters())
                .allSatisfy(c -> assertThat(c.getId().getTag("exception")).isNotBlank());
        assertThat(output)
                .containsPattern("WARN .* Idempotency store failed on POST /v1/charges: guarded requests "
                        + "answer 503 and their handlers do not run until it answers.*: Redis standalone failed");
    }

    @Test
    void theHealthEndpointReportsTheStoreDown() throws Exception {
        HttpResponse<String> response = http.get("/actuator/health");
        assertThat(response.statusCode()).isEqualTo(503);
        JsonNode idempotency = TestHttp.healthComponent(response);
        assertThat(idempotency.get("status").asString()).isEqualTo("DOWN");
        assertThat(idempotency.get("details").get("store").asString()).contains("RedisIdempotencyStore");
        assertThat(idempotency.get("details").get("error").asString()).contains("StoreUnavailableException");
    }

    private double storeErrors() {
        return registry.find(STORE_ERRORS).tag("route", "/v1/charges").counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }
}
