package dev.exactly.idempotency.spring.boot.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.webflux.IdempotencyWebFilter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;

/**
 * A reactive (WebFlux) Spring Boot application gets the WebFlux filter from the starter, on the routes of its
 * {@code @Idempotent} controller methods, answering as the servlet filter does, over real HTTP on Netty.
 */
@SpringBootTest(
        classes = ReactiveApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.web-application-type=reactive", "spring.config.name=reactive"})
class ReactiveStarterTest {
    /** A thread per request, so that the duplicates are in flight together. */
    private static final java.util.concurrent.Executor THREADS =
            java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();

    private static final HttpClient CLIENT =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    @Autowired
    ReactiveApplication.Charges charges;

    private HttpResponse<String> post(String path, String key, String apiKey, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        if (apiKey != null) {
            request.header("Authorization", "Bearer " + apiKey);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theStarterGuardsTheAnnotatedWebFluxRoutes() throws Exception {
        assertThat(context.getBean(IdempotencyWebFilter.class).routes())
                .extracting(IdempotentRoute::pathTemplate)
                .containsExactlyInAnyOrder("/v1/charges", "/v1/slow");
        assertThat(context.getBeanNamesForType(jakarta.servlet.Filter.class)).isEmpty();

        HttpResponse<String> first = post("/v1/charges", "k-reactive-1", "sk_test_acme", "{\"amount\":100}");
        HttpResponse<String> retry = post("/v1/charges", "k-reactive-1", "sk_test_acme", "{ \"amount\" : 100 }");
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotency-Expires")).isPresent();
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");

        // Spring's mappings decode the path: so does the filter, and an encoded retry is the same request
        HttpResponse<String> encodedRetry = post("/v1/%63harges", "k-reactive-1", "sk_test_acme", "{\"amount\":100}");
        assertThat(encodedRetry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(encodedRetry.body()).isEqualTo(first.body());
        HttpResponse<String> encoded = post("/v1/%63harges", "k-reactive-2", "sk_test_acme", "{\"amount\":100}");
        HttpResponse<String> plainRetry = post("/v1/charges", "k-reactive-2", "sk_test_acme", "{\"amount\":100}");
        assertThat(encoded.statusCode())
                .as("the encoded path reaches the handler")
                .isEqualTo(201);
        assertThat(encoded.body()).isNotEqualTo(first.body());
        assertThat(plainRetry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(plainRetry.body()).isEqualTo(encoded.body());

        HttpResponse<String> reused = post("/v1/charges", "k-reactive-1", "sk_test_acme", "{\"amount\":999}");
        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(reused.body()).contains("idempotency_key_reused");
        assertThat(post("/v1/charges", null, "sk_test_acme", "{}").body()).contains("idempotency_key_missing");
        HttpResponse<String> stranger = post("/v1/charges", "k-reactive-1", "sk_unknown", "{\"amount\":100}");
        assertThat(stranger.statusCode()).isEqualTo(401);
        assertThat(stranger.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
        assertThat(charges.runs).hasValue(2);
    }

    @Test
    void concurrentDuplicatesOfANonBlockingHandlerWaitAndGetTheOneAnswer() throws Exception {
        int before = charges.runs.get();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            calls.add(CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return post("/v1/slow", "k-reactive-slow", "sk_test_acme", "{\"amount\":5}");
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    THREADS));
        }
        List<String> bodies = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> call : calls) {
            HttpResponse<String> response = call.get();
            assertThat(response.statusCode()).isEqualTo(201);
            bodies.add(response.body());
        }
        assertThat(bodies).containsOnly(bodies.getFirst());
        assertThat(charges.runs.get() - before).isEqualTo(1);
    }
}
