package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.TestHttp.ACME;
import static dev.exactly.idempotency.spring.boot.TestHttp.body;
import static dev.exactly.idempotency.spring.boot.TestHttp.ref;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.spring.boot.actuate.IdempotencyEndpoint;
import dev.exactly.idempotency.spring.boot.app.Handlers;
import dev.exactly.idempotency.spring.boot.app.TestApplication;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/**
 * The operators' endpoint over HTTP: reading a record by tenant and key (never its body), releasing one
 * stuck in flight with an audit line (after which the same key runs again, and the stale owner's late
 * answer is refused), and the refusals. Off unless its access is granted.
 */
@SpringBootTest(
        classes = TestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "management.endpoints.web.exposure.include=health,idempotency",
            "management.endpoint.idempotency.access=unrestricted"
        })
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyEndpointTest {
    @LocalServerPort
    int port;

    @Autowired
    Handlers handlers;

    TestHttp http;

    @BeforeEach
    void client() {
        http = new TestHttp(port);
    }

    @Test
    void aFinishedRecordIsReadByTenantAndKeyWithoutItsBody() throws Exception {
        String ref = ref();
        assertThat(http.post("/v1/charges", "k-" + ref, ACME, body(ref), null).statusCode())
                .isEqualTo(201);

        JsonNode read = http.getJson("/actuator/idempotency/acme/k-" + ref);
        assertThat(read.get("tenant").asString()).isEqualTo("acme");
        JsonNode record = read.get("records").get(0);
        assertThat(read.get("records")).hasSize(1);
        assertThat(record.get("method").asString()).isEqualTo("POST");
        assertThat(record.get("route").asString()).isEqualTo("/v1/charges");
        assertThat(record.get("status").asString()).isEqualTo("completed");
        assertThat(record.get("scope").asString()).hasSize(64);
        assertThat(record.get("fingerprintAlgorithm").asString()).isEqualTo("sha256-jcs");
        assertThat(record.get("response").get("status").asInt()).isEqualTo(201);
        assertThat(record.get("response").get("bodyBytes").asInt()).isPositive();
        assertThat(read.toString())
                .doesNotContain(ref.substring(0, 8) + "\",\"run\"")
                .doesNotContain("ch_");

        // a key holding '/' is the rest of the path
        String slashed = "orders/" + ref;
        assertThat(http.post("/v1/charges", slashed, ACME, body(ref + "-2"), null)
                        .statusCode())
                .isEqualTo(201);
        assertThat(http.getJson("/actuator/idempotency/acme/" + slashed).get("records"))
                .hasSize(1);

        // another tenant's key space, an unknown key, a malformed one, a named route
        assertThat(http.get("/actuator/idempotency/globex/k-" + ref).statusCode())
                .isEqualTo(404);
        assertThat(http.get("/actuator/idempotency/acme/unknown-" + ref).statusCode())
                .isEqualTo(404);
        assertThat(http.get("/actuator/idempotency/acme/" + "x".repeat(300)).statusCode())
                .isEqualTo(400);
        assertThat(http.getJson("/actuator/idempotency/acme/k-" + ref + "?method=post&route=/v1/charges")
                        .get("records"))
                .hasSize(1);
        assertThat(http.get("/actuator/idempotency/acme/k-" + ref + "?route=/v1/charges")
                        .statusCode())
                .isEqualTo(400);
        // a finished record is not released
        assertThat(http.delete("/actuator/idempotency/acme/k-" + ref + "?method=POST&route=/v1/charges")
                        .statusCode())
                .isEqualTo(409);
    }

    @Test
    void aStuckRecordIsReleasedWithAnAuditLineAndTheKeyRunsAgain(CapturedOutput output) throws Exception {
        String ref = ref();
        String key = "k-" + ref;
        handlers.hold(ref);
        CompletableFuture<HttpResponse<String>> stuck =
                CompletableFuture.supplyAsync(() -> post("/v1/charges", key, body(ref)));
        await().atMost(Duration.ofSeconds(20)).until(() -> handlers.runs(ref) == 1);

        JsonNode processing =
                http.getJson("/actuator/idempotency/acme/" + key).get("records").get(0);
        assertThat(processing.get("status").asString()).isEqualTo("processing");
        assertThat(processing.has("leaseExpiresAt")).isTrue();
        assertThat(processing.has("response")).isFalse();
        assertThat(http.delete("/actuator/idempotency/acme/" + key).statusCode())
                .as("route required")
                .isEqualTo(400);

        HttpResponse<String> released =
                http.delete("/actuator/idempotency/acme/" + key + "?method=POST&route=/v1/charges");
        assertThat(released.statusCode()).as(released.body()).isEqualTo(200);
        assertThat(TestHttp.JSON.readTree(released.body()).get("released").asBoolean())
                .isTrue();
        assertThat(output.getOut() + output.getErr())
                .contains("Idempotency record released by an operator")
                .contains("tenant=acme, POST /v1/charges, scope="
                        + processing.get("scope").asString())
                .doesNotContain(key);
        assertThat(http.get("/actuator/idempotency/acme/" + key).statusCode()).isEqualTo(404);

        // the retry runs again; the stale owner's late answer is refused: it lost its lease
        handlers.release(ref);
        assertThat(stuck.get().statusCode()).isEqualTo(409);
        assertThat(stuck.get().body()).contains("idempotency_lease_lost");
        HttpResponse<String> retry = http.post("/v1/charges", key, ACME, body(ref), null);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(handlers.runs(ref)).isEqualTo(2);
    }

    @Test
    void theEndpointIsOffUnlessItsAccessIsGranted() {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        EndpointAutoConfiguration.class,
                        IdempotencyAutoConfiguration.class,
                        IdempotencyEndpointAutoConfiguration.class))
                .withPropertyValues(
                        "exactly.idempotency.routes[0].path=/v1/charges", "management.endpoints.web.exposure.include=*")
                .run(context -> assertThat(context).doesNotHaveBean(IdempotencyEndpoint.class));
    }

    private HttpResponse<String> post(String path, String key, String body) {
        try {
            return http.post(path, key, ACME, body, null);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
