package dev.exactly.idempotency.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.servlet.Call;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.KeepAliveConnection;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseCookie;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.config.EnableWebFlux;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The filter in a Spring WebFlux application of annotated controllers ({@code @EnableWebFlux}, the
 * {@code DispatcherHandler}): what a controller answers with {@code ResponseEntity}, the exchange's response or a
 * conditional request is recorded and replayed as the servlet filter records Spring MVC's same answers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AnnotatedControllerTest {
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final AtomicInteger RUNS = new AtomicInteger();
    private static final int STORED = 4096;
    private static volatile CountDownLatch release = new CountDownLatch(1);

    private AnnotationConfigApplicationContext context;
    private DisposableServer server;
    private Call.Endpoint endpoint;

    @Configuration
    @EnableWebFlux
    static class Application {
        @Bean
        IdempotencyWebFilter idempotencyWebFilter() {
            return IdempotencyWebFilter.builder(IdempotencyEngine.builder(InMemoryIdempotencyStore.create())
                            .build())
                    .route(IdempotentRoute.post("/v1/{action}"))
                    .route(IdempotentRoute.builder("PUT", "/v1/items/{id}").build())
                    .route(IdempotentRoute.builder("GET", "/v1/items/{id}").build())
                    .tenantResolver(ReactiveTenantResolver.single("acme"))
                    .maxStoredResponseBytes(STORED)
                    .build();
        }

        @Bean
        Controller controller() {
            return new Controller();
        }
    }

    @RestController
    static class Controller {
        @PostMapping("/v1/entity")
        ResponseEntity<String> entity() {
            int run = RUNS.incrementAndGet();
            return ResponseEntity.created(URI.create("/v1/things/" + run))
                    .cacheControl(CacheControl.noStore())
                    .contentType(MediaType.TEXT_PLAIN)
                    .header("Set-Cookie", "session=" + run)
                    .header("WWW-Authenticate", "Bearer realm=\"run-" + run + "\"")
                    .body("created " + run);
        }

        @PostMapping("/v1/cookie")
        Mono<Void> cookie(ServerWebExchange exchange) {
            int run = RUNS.incrementAndGet();
            exchange.getResponse()
                    .addCookie(
                            ResponseCookie.from("visit", Integer.toString(run)).build());
            exchange.getResponse().getHeaders().setLocation(URI.create("/v1/visits/" + run));
            return exchange.getResponse().setComplete();
        }

        @PostMapping(path = "/v1/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
        Flux<ServerSentEvent<String>> events() {
            int run = RUNS.incrementAndGet();
            CountDownLatch held = release;
            // each event is written and flushed on its own (writeAndFlushWith); the first 30 pass the storage limit
            return Flux.concat(
                            Flux.range(0, 30),
                            Mono.fromCallable(() -> held.await(30, TimeUnit.SECONDS))
                                    .subscribeOn(Schedulers.boundedElastic())
                                    .filter(Boolean::booleanValue)
                                    .switchIfEmpty(Mono.error(new IllegalStateException("never released")))
                                    .then(Mono.<Integer>empty()),
                            Flux.range(30, 10))
                    .map(i -> ServerSentEvent.builder("x".repeat(200))
                            .id(run + "-" + i)
                            .build());
        }

        @PostMapping("/v1/unchanged")
        ResponseEntity<Void> unchanged() {
            RUNS.incrementAndGet();
            return ResponseEntity.status(304).eTag("u1").build();
        }

        @PutMapping("/v1/items/{id}")
        Mono<ResponseEntity<String>> put(@PathVariable String id, ServerWebExchange exchange) {
            int run = RUNS.incrementAndGet();
            if (exchange.checkNotModified("v1")) {
                return Mono.empty(); // the status, 412 for an If-Match that does not match, is set
            }
            return Mono.just(ResponseEntity.ok("put " + id + ", run " + run));
        }

        @GetMapping("/v1/items/{id}")
        ResponseEntity<String> get(@PathVariable String id) {
            int run = RUNS.incrementAndGet();
            return ResponseEntity.ok().eTag("g1").body("item " + id + ", run " + run);
        }
    }

    @BeforeAll
    void start() {
        context = new AnnotationConfigApplicationContext(Application.class);
        server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle(new ReactorHttpHandlerAdapter(
                        WebHttpHandlerBuilder.applicationContext(context).build()))
                .bindNow();
        endpoint = path -> URI.create("http://127.0.0.1:" + server.port() + path);
    }

    @AfterAll
    void stop() {
        server.disposeNow();
        context.close();
    }

    @BeforeEach
    void reset() {
        RUNS.set(0);
    }

    private static String newKey() {
        return "k-" + UUID.randomUUID();
    }

    /** The same POST twice on one connection, read byte for byte. */
    private List<KeepAliveConnection.Answer> twice(String path) throws Exception {
        List<String> headers = List.of("Idempotency-Key: " + newKey(), "Content-Type: application/json");
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        try (KeepAliveConnection connection = KeepAliveConnection.open(endpoint)) {
            return List.of(connection.post(path, headers, body), connection.post(path, headers, body));
        }
    }

    @Test
    void aResponseEntitysHeadersAreReplayedButNotItsCookiesOrChallenges() throws Exception {
        List<KeepAliveConnection.Answer> answers = twice("/v1/entity");
        KeepAliveConnection.Answer first = answers.get(0);
        KeepAliveConnection.Answer replay = answers.get(1);
        assertThat(first.status()).isEqualTo(201);
        assertThat(first.headers())
                .containsKeys("set-cookie", "www-authenticate", "idempotency-expires")
                .doesNotContainKey("idempotent-replayed");
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.text()).isEqualTo(first.text()).isEqualTo("created 1");
        for (String header :
                List.of("location", "cache-control", "content-type", "content-length", "idempotency-expires")) {
            assertThat(replay.headers().get(header))
                    .as(header)
                    .isEqualTo(first.headers().get(header))
                    .isNotNull();
        }
        assertThat(replay.headers()).doesNotContainKeys("set-cookie", "www-authenticate");
        assertThat(replay.headers().get("idempotent-replayed")).isEqualTo("true");
        assertThat(replay.headers().get("x-idempotent-replay")).isEqualTo("true");
        assertThat(RUNS).hasValue(1);
    }

    @Test
    void aResponseCompletedWithoutBodyKeepsItsHeadersButItsCookieGoesToTheFirstCallerOnly() throws Exception {
        List<KeepAliveConnection.Answer> answers = twice("/v1/cookie");
        for (KeepAliveConnection.Answer answer : answers) {
            assertThat(answer.status()).isEqualTo(200);
            assertThat(answer.body()).isEmpty();
            assertThat(answer.headers().get("content-length")).isEqualTo("0");
            assertThat(answer.headers().get("location")).isEqualTo("/v1/visits/1");
        }
        assertThat(answers.get(0).headers().get("set-cookie")).isEqualTo("visit=1");
        assertThat(answers.get(1).headers()).doesNotContainKey("set-cookie");
        assertThat(RUNS).hasValue(1);
    }

    @Test
    void serverSentEventsPastTheStorageLimitReachTheClientWhileTheHandlerRunsAndAreNeverRunAgain() throws Exception {
        release = new CountDownLatch(1);
        String key = newKey();
        HttpResponse<InputStream> response = CLIENT.send(
                HttpRequest.newBuilder(endpoint.uri("/v1/events"))
                        .header("Idempotency-Key", key)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{}"))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        List<String> ids = new ArrayList<>();
        try (BufferedReader events =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(t -> assertThat(t).startsWith("text/event-stream"));
            assertThat(response.headers().firstValue("Idempotency-Expires")).isPresent();
            for (String line = events.readLine(); line != null; line = events.readLine()) {
                if (line.startsWith("id:")) {
                    ids.add(line.substring(3));
                }
                if (ids.size() == 30) {
                    release.countDown(); // the first 30 arrived while the handler waited: flushed as written
                }
            }
        } finally {
            release.countDown();
        }
        assertThat(ids).hasSize(40).startsWith("1-0").endsWith("1-39");
        HttpResponse<byte[]> retry =
                Call.post(endpoint, "/v1/events").key(key).json("{}").send();
        assertThat(retry.statusCode()).isEqualTo(200);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(Call.text(retry)).contains("response_not_stored");
        assertThat(RUNS).hasValue(1);
    }

    @Test
    void aNotModifiedAnswerIsReplayedWithoutBodyOrContentLength() throws Exception {
        for (KeepAliveConnection.Answer answer : twice("/v1/unchanged")) {
            assertThat(answer.status()).isEqualTo(304);
            assertThat(answer.body()).isEmpty();
            assertThat(answer.headers()).doesNotContainKeys("content-length", "transfer-encoding");
            assertThat(answer.headers().get("etag")).isEqualTo("\"u1\"");
        }
        assertThat(RUNS).hasValue(1);
    }

    @Test
    void anIfMatchThatFailsIs412AndRecordedAsTheFailureItIs() throws Exception {
        String key = newKey();
        HttpResponse<byte[]> first = Call.request(endpoint, "PUT", "/v1/items/a")
                .key(key)
                .header("If-Match", "\"v0\"")
                .json("{}")
                .send();
        HttpResponse<byte[]> retry = Call.request(endpoint, "PUT", "/v1/items/a")
                .key(key)
                .header("If-Match", "\"v0\"")
                .json("{}")
                .send();
        assertThat(first.statusCode()).as(Call.text(first)).isEqualTo(412);
        assertThat(retry.statusCode()).isEqualTo(412);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(RUNS).hasValue(1);

        HttpResponse<byte[]> matching = Call.request(endpoint, "PUT", "/v1/items/a")
                .key(newKey())
                .header("If-Match", "\"v1\"")
                .json("{}")
                .send();
        assertThat(matching.statusCode()).isEqualTo(200);
        assertThat(Call.text(matching)).isEqualTo("put a, run 2");
    }

    @Test
    void aGetWhoseEntityTagMatchesIsNotModifiedAndReplayedSo() throws Exception {
        String key = newKey();
        HttpResponse<byte[]> first = Call.request(endpoint, "GET", "/v1/items/b")
                .key(key)
                .header("If-None-Match", "\"g1\"")
                .send();
        HttpResponse<byte[]> retry = Call.request(endpoint, "GET", "/v1/items/b")
                .key(key)
                .header("If-None-Match", "\"g1\"")
                .send();
        for (HttpResponse<byte[]> response : List.of(first, retry)) {
            assertThat(response.statusCode()).isEqualTo(304);
            assertThat(response.body()).isEmpty();
            assertThat(response.headers().firstValue("ETag")).hasValue("\"g1\"");
            assertThat(response.headers().firstValue("Content-Length")).isEmpty();
        }
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(RUNS).hasValue(1);
    }
}
