package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.spring.boot.app.Handlers;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A real HTTP client of the test application on {@code port}, and what the tests check of its answers. */
final class TestHttp {
    /** API keys of the test tenants (see application.properties). */
    static final String ACME = "sk_test_acme";

    static final String GLOBEX = "sk_test_globex";
    static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private final int port;

    TestHttp(int port) {
        this.port = port;
    }

    static String ref() {
        return UUID.randomUUID().toString();
    }

    /** A charge-like JSON body naming {@code ref}. */
    static String body(String ref) {
        return "{\"ref\":\"" + ref + "\",\"amount\":100,\"currency\":\"EUR\"}";
    }

    /** A JSON POST; {@code key}, {@code apiKey} and {@code testRef} are sent as headers when not null. */
    HttpResponse<String> post(String path, String key, String apiKey, String body, String testRef)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        if (apiKey != null) {
            request.header("Authorization", "Bearer " + apiKey);
        }
        if (testRef != null) {
            request.header(Handlers.REF_HEADER, testRef);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return CLIENT.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(30))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> delete(String path) throws IOException, InterruptedException {
        return CLIENT.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(30))
                        .DELETE()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    JsonNode getJson(String path) throws IOException, InterruptedException {
        HttpResponse<String> response = get(path);
        assertThat(response.statusCode()).as(path + ": " + response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    /** The {@code idempotency} component of the health endpoint's answer. */
    static JsonNode healthComponent(HttpResponse<String> health) {
        return JSON.readTree(health.body()).get("components").get("idempotency");
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /** A statistic (COUNT, VALUE, ...) of an actuator metrics document. */
    static double statistic(JsonNode metric, String statistic) {
        for (JsonNode measurement : metric.get("measurements")) {
            if (measurement.get("statistic").asString().equals(statistic)) {
                return measurement.get("value").asDouble();
            }
        }
        throw new AssertionError("no " + statistic + " in " + metric);
    }

    static void assertProblem(HttpResponse<String> response, int status, String code) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode problem = JSON.readTree(response.body());
        assertThat(problem.get("status").asInt()).isEqualTo(status);
        assertThat(problem.get("code").asString()).isEqualTo(code);
        assertThat(problem.get("type").asString()).startsWith("https://exactly.dev/problems/");
    }

    static void assertReplayOf(HttpResponse<String> replay, HttpResponse<String> original) {
        assertThat(replay.statusCode()).isEqualTo(original.statusCode());
        assertThat(replay.body()).isEqualTo(original.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.headers().firstValue("X-Idempotent-Replay")).hasValue("true");
    }
}
