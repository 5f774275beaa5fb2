package dev.exactly.idempotency.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.server.WebHandler;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * Every request of a keep-alive connection is answered, whatever was answered before it on that connection.
 * The guard answers later than a plain handler (it reads the body, then runs on a worker), so a request that
 * follows another on its connection arrives while the server still ends the one before: Reactor Netty 1.3.6 (the
 * version Spring Boot 4.0.7 manages) left about one in sixty of those guarded requests without an answer, the
 * client waiting until its own timeout. Each pair is sent a few hundred times on one connection, as the JDK
 * client sends them: the next request as soon as the answer to the one before has been read.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KeepAliveTest {

    private static final int PAIRS = 500;
    private static final Duration PATIENCE = Duration.ofSeconds(3);

    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private DisposableServer server;

    @BeforeAll
    void start() {
        IdempotencyWebFilter filter = IdempotencyWebFilter.builder(
                        IdempotencyEngine.builder(InMemoryIdempotencyStore.create())
                                .build())
                .routes(List.of(IdempotentRoute.post("/v1/{action}")))
                .tenantResolver(ReactiveTenantResolver.single("acme"))
                .build();
        WebHandler application = exchange -> {
            exchange.getResponse()
                    .setStatusCode(
                            exchange.getRequest().getMethod().name().equals("POST")
                                    ? HttpStatus.CREATED
                                    : HttpStatus.OK);
            byte[] body = exchange.getRequest().getMethod().name().getBytes(StandardCharsets.US_ASCII);
            return exchange.getResponse()
                    .writeWith(Mono.just(exchange.getResponse().bufferFactory().wrap(body)));
        };
        server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle(new ReactorHttpHandlerAdapter(WebHttpHandlerBuilder.webHandler(application)
                        .filters(filters -> filters.add(filter))
                        .build()))
                .bindNow();
    }

    @AfterAll
    void stop() {
        server.disposeNow();
    }

    /**
     * The request before the guarded one: answered by the handler without the guard ({@code get}), refused by
     * the guard before it reads anything ({@code no-key}: 400), or guarded itself ({@code guarded}).
     */
    @ParameterizedTest(name = "after a {0} request")
    @ValueSource(strings = {"get", "no-key", "guarded"})
    void aGuardedRequestIsAnsweredWhateverCameBeforeItOnItsConnection(String before) throws Exception {
        List<String> unanswered = new ArrayList<>();
        for (int pair = 0; pair < PAIRS; pair++) {
            HttpResponse<String> first = send(builder(before));
            assertThat(first).as("the request before, pair %d", pair).isNotNull();
            String key = "k-" + UUID.randomUUID();
            HttpResponse<String> guarded = send(HttpRequest.newBuilder(uri("/v1/charges"))
                    .header("Idempotency-Key", key)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"pair\":" + pair + "}")));
            if (guarded == null) {
                unanswered.add("pair " + pair + " (" + key + ")");
            } else {
                assertThat(guarded.statusCode()).isEqualTo(201);
                assertThat(guarded.body()).isEqualTo("POST");
            }
        }
        assertThat(unanswered)
                .as("guarded requests without an answer within %s, of %d", PATIENCE, PAIRS)
                .isEmpty();
    }

    private HttpRequest.Builder builder(String kind) {
        return switch (kind) {
            case "get" -> HttpRequest.newBuilder(uri("/v1/charges")).GET();
            case "no-key" ->
                HttpRequest.newBuilder(uri("/v1/charges"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{}"));
            default ->
                HttpRequest.newBuilder(uri("/v1/charges"))
                        .header("Idempotency-Key", "k-" + UUID.randomUUID())
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{}"));
        };
    }

    /** The answer, or null when none came within {@link #PATIENCE}. */
    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        try {
            return client.send(request.timeout(PATIENCE).build(), HttpResponse.BodyHandlers.ofString());
        } catch (HttpTimeoutException e) {
            return null;
        }
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }
}
