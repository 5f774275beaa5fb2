package dev.exactly.idempotency.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.Problem;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebHandler;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import org.springframework.web.server.handler.ResponseStatusExceptionHandler;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * What a reactive handler can do that the shared HTTP contract's blocking handler cannot: end with a {@code
 * ResponseStatusException}, set a raw status, read form data through the exchange, and lose its client while
 * it runs. Each answer must be recorded as the handler gave it, and a retry must replay it, never run again.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReactiveHandlerTest {
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final int STORED = 16 * 1024;
    private static final int CHUNK = 8 * 1024;

    private final AtomicInteger runs = new AtomicInteger();
    private final AtomicBoolean bodyCancelled = new AtomicBoolean();
    private volatile CountDownLatch cancelled = new CountDownLatch(1);
    private volatile CountDownLatch started = new CountDownLatch(1);
    private volatile CountDownLatch release = new CountDownLatch(1);
    private DisposableServer server;

    @BeforeAll
    void start() {
        IdempotencyWebFilter filter = IdempotencyWebFilter.builder(
                        IdempotencyEngine.builder(InMemoryIdempotencyStore.create())
                                .build())
                .routes(java.util.List.of(IdempotentRoute.post("/v1/{action}")))
                .tenantResolver(ReactiveTenantResolver.single("acme"))
                .maxStoredResponseBytes(STORED)
                .build();
        // in front of the filter: tells the test when the server gave up on a departed client
        WebFilter departures = (exchange, chain) -> chain.filter(exchange).doOnCancel(() -> cancelled.countDown());
        HttpHandler http = WebHttpHandlerBuilder.webHandler(application())
                .filters(filters -> filters.addAll(java.util.List.of(departures, filter)))
                .exceptionHandler(new ResponseStatusExceptionHandler())
                .build();
        server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle(new ReactorHttpHandlerAdapter(http))
                .bindNow();
    }

    @AfterAll
    void stop() {
        server.disposeNow();
    }

    @BeforeEach
    void reset() {
        runs.set(0);
        cancelled = new CountDownLatch(1);
        bodyCancelled.set(false);
    }

    private WebHandler application() {
        return exchange -> {
            int run = runs.incrementAndGet();
            return switch (exchange.getRequest().getPath().value()) {
                case "/v1/slow" ->
                    Mono.fromRunnable(this::holdUntilReleased)
                            .subscribeOn(Schedulers.boundedElastic())
                            .then(Mono.defer(() -> write(exchange, 201, "{\"run\":" + run + "}")));
                case "/v1/stream" ->
                    exchange.getResponse()
                            .writeWith(Flux.concat(
                                    Flux.range(0, 3).map(i -> chunk(exchange)), // past the limit
                                    Mono.fromRunnable(this::holdUntilReleased)
                                            .subscribeOn(Schedulers.boundedElastic())
                                            .thenMany(Flux.range(0, 5).map(i -> chunk(exchange)))));
                case "/v1/outlived" ->
                    exchange.getResponse()
                            .writeWith(Flux.concat(
                                            Flux.range(0, 3)
                                                    .map(i -> chunk(exchange)), // past the limit: the head goes out
                                            Mono.fromRunnable(this::holdUntilReleased)
                                                    .subscribeOn(Schedulers.boundedElastic())
                                                    .thenMany(Flux.range(0, 5).map(i -> chunk(exchange))))
                                    .doOnCancel(() -> bodyCancelled.set(true)));
                case "/v1/broken" ->
                    exchange.getResponse()
                            .writeWith(Flux.concat(
                                    Flux.range(0, 3).map(i -> chunk(exchange)), // past the limit: the head goes out
                                    Flux.error(new IllegalStateException("failed in the middle of its body"))));
                case "/v1/form" ->
                    exchange.getFormData()
                            .flatMap(form ->
                                    write(exchange, 201, "a=" + form.getFirst("a") + "&b=" + form.getFirst("b")));
                case "/v1/declined" ->
                    Mono.error(new ResponseStatusException(HttpStatus.PAYMENT_REQUIRED, "card declined"));
                case "/v1/tagged" -> {
                    // what a filter after the guard, or the handler, adds as the response commits
                    exchange.getResponse()
                            .beforeCommit(() -> Mono.fromRunnable(
                                    () -> exchange.getResponse().getHeaders().setETag("\"run-" + run + "\"")));
                    yield write(exchange, 201, "{\"run\":" + run + "}");
                }
                case "/v1/tagged-stream" -> {
                    exchange.getResponse()
                            .beforeCommit(() -> Mono.fromRunnable(
                                    () -> exchange.getResponse().getHeaders().setETag("\"run-" + run + "\"")));
                    yield exchange.getResponse()
                            .writeWith(Flux.range(0, 3).map(i -> chunk(exchange))); // past the limit
                }
                case "/v1/status" ->
                    write(exchange, null, "status " + exchange.getResponse().getStatusCode());
                case "/v1/raw" -> {
                    exchange.getResponse().setRawStatusCode(402);
                    yield write(exchange, null, "declined, run " + run);
                }
                default -> write(exchange, 201, "{\"run\":" + run + "}");
            };
        };
    }

    private static DataBuffer chunk(ServerWebExchange exchange) {
        byte[] bytes = new byte[CHUNK];
        java.util.Arrays.fill(bytes, (byte) 'x');
        return exchange.getResponse().bufferFactory().wrap(bytes);
    }

    private void holdUntilReleased() {
        started.countDown();
        try {
            if (!release.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("the handler was interrupted", e);
        }
    }

    private static Mono<Void> write(ServerWebExchange exchange, Integer status, String body) {
        if (status != null) {
            exchange.getResponse().setStatusCode(HttpStatusCode.valueOf(status));
        }
        return exchange.getResponse()
                .writeWith(
                        Mono.just(exchange.getResponse().bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8))));
    }

    private HttpResponse<String> post(String path, String key, String contentType, String body) throws Exception {
        return CLIENT.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                        .timeout(Duration.ofSeconds(30))
                        .header("Idempotency-Key", key)
                        .header("Content-Type", contentType)
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static boolean replayed(HttpResponse<String> response) {
        return response.headers().firstValue("Idempotent-Replayed").isPresent();
    }

    /** What a client does on its connection before it goes away. */
    @FunctionalInterface
    private interface BeforeLeaving {
        void on(Socket socket) throws Exception;
    }

    /**
     * Sends a request on a connection of its own, waits for its handler to start (it then waits to be released),
     * does {@code beforeLeaving} and goes away; releases the handler once the server noticed, and sends the retry
     * until the key is no longer in flight.
     */
    private HttpResponse<String> leaveThenRetry(String path, BeforeLeaving beforeLeaving) throws Exception {
        started = new CountDownLatch(1);
        release = new CountDownLatch(1);
        String key = "k-" + UUID.randomUUID();
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: " + key
                            + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(started.await(10, TimeUnit.SECONDS))
                    .as("the handler started")
                    .isTrue();
            beforeLeaving.on(socket);
        }
        assertThat(cancelled.await(10, TimeUnit.SECONDS))
                .as("the server noticed the client leave")
                .isTrue();
        release.countDown();
        return await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> post(path, key, "application/json", "{}"), response -> response.statusCode() != 409);
    }

    @Test
    void aHandlerWhoseClientWentAwayRunsToItsRecordedOutcomeAndTheRetryReplaysIt() throws Exception {
        HttpResponse<String> retry = leaveThenRetry("/v1/slow", socket -> {});
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(replayed(retry)).as("the retry is the first run's answer").isTrue();
        assertThat(retry.body()).isEqualTo("{\"run\":1}");
        assertThat(runs).hasValue(1);
    }

    @Test
    void aBodyPastTheStorageLimitStreamsToTheClientWhileTheHandlerStillWrites() throws Exception {
        started = new CountDownLatch(1);
        release = new CountDownLatch(1);
        String key = "k-" + UUID.randomUUID();
        java.util.concurrent.CompletableFuture<HttpResponse<java.io.InputStream>> call = CLIENT.sendAsync(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/stream"))
                        .header("Idempotency-Key", key)
                        .POST(HttpRequest.BodyPublishers.ofString("{}"))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        try {
            assertThat(started.await(10, TimeUnit.SECONDS))
                    .as("the handler wrote past the limit and waits")
                    .isTrue();
            // the head and the first chunks reach the client before the handler has finished its body
            HttpResponse<java.io.InputStream> response = call.get(10, TimeUnit.SECONDS);
            assertThat(response.statusCode()).isEqualTo(200);
            byte[] early = response.body().readNBytes(3 * CHUNK);
            assertThat(early).hasSize(3 * CHUNK);
            release.countDown();
            assertThat(early.length + response.body().readAllBytes().length).isEqualTo(8 * CHUNK);
        } finally {
            release.countDown();
        }
        HttpResponse<String> retry = post("/v1/stream", key, "application/json", "{}");
        assertThat(replayed(retry)).isTrue();
        assertThat(retry.body()).contains("response_not_stored");
        assertThat(runs).hasValue(1);
    }

    @Test
    void aStreamedBodyWhoseClientWentAwayIsWrittenToItsEndAndRecordedWithItsFullLength() throws Exception {
        // the handler wrote past the limit and waits: the head and the body so far were sent
        HttpResponse<String> retry = leaveThenRetry(
                "/v1/outlived",
                socket -> assertThat(socket.getInputStream().readNBytes(CHUNK)).hasSize(CHUNK));
        assertThat(replayed(retry)).as(retry.body()).isTrue();
        assertThat(retry.statusCode()).isEqualTo(200);
        // as the servlet filter counts the writes of a departed client: the handler wrote all of it
        assertThat(retry.body()).contains("response_not_stored").contains("its " + 8 * CHUNK + "-byte response body");
        assertThat(bodyCancelled).as("the handler's body was not cancelled").isFalse();
        assertThat(runs).hasValue(1);
    }

    @Test
    void aHandlerThatFailsAfterItsHeadWasStreamedRanAndIsNotRunAgain() throws Exception {
        String key = "k-" + UUID.randomUUID();
        try {
            HttpResponse<String> broken = post("/v1/broken", key, "application/json", "{}");
            assertThat(broken.body().length()).as("the response was broken off").isLessThan(3 * CHUNK);
        } catch (java.io.IOException brokenOff) {
            // the client saw the response broken off: what a failure after the head must look like
        }
        HttpResponse<String> retry = post("/v1/broken", key, "application/json", "{}");
        assertThat(replayed(retry)).isTrue();
        assertThat(retry.body()).contains("response_not_stored");
        assertThat(runs).hasValue(1);
    }

    /** Sends the request twice under one fresh key: the retry must replay the first answer, the handler ran once. */
    private HttpResponse<String> firstOfTwo(String path, String contentType, String body) throws Exception {
        String key = "k-" + UUID.randomUUID();
        HttpResponse<String> first = post(path, key, contentType, body);
        HttpResponse<String> retry = post(path, key, contentType, body);
        assertThat(retry.statusCode()).isEqualTo(first.statusCode());
        assertThat(replayed(retry)).as("the retry is replayed").isTrue();
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(runs).as("the handler ran once").hasValue(1);
        return first;
    }

    @Test
    void aResponseStatusExceptionIsTheHandlersAnswerAndIsReplayed() throws Exception {
        HttpResponse<String> first = firstOfTwo("/v1/declined", "application/json", "{}");
        assertThat(first.statusCode()).isEqualTo(402);
        assertThat(first.headers().firstValue("Content-Type")).hasValue(Problem.MEDIA_TYPE);
        assertThat(first.body()).contains("\"status\":402").contains("\"detail\":\"card declined\"");
    }

    @Test
    void headersAddedAsTheResponseCommitsAreSentAndReplayed() throws Exception {
        HttpResponse<String> first = firstOfTwo("/v1/tagged", "application/json", "{}");
        assertThat(first.headers().firstValue("ETag")).as("sent").hasValue("\"run-1\"");
        HttpResponse<String> again = post(
                "/v1/tagged",
                first.request().headers().firstValue("Idempotency-Key").orElseThrow(),
                "application/json",
                "{}");
        assertThat(again.headers().allValues("ETag"))
                .as("recorded and replayed, once")
                .containsExactly("\"run-1\"");
        assertThat(runs).hasValue(1);
    }

    @Test
    void headersAddedAsAStreamedResponseCommitsAreSent() throws Exception {
        String key = "k-" + UUID.randomUUID();
        HttpResponse<String> first = post("/v1/tagged-stream", key, "application/json", "{}");
        assertThat(first.body()).hasSize(3 * CHUNK);
        assertThat(first.headers().allValues("ETag")).containsExactly("\"run-1\"");
        HttpResponse<String> retry = post("/v1/tagged-stream", key, "application/json", "{}");
        assertThat(replayed(retry)).isTrue();
        assertThat(runs).hasValue(1);
    }

    @Test
    void aRawStatusIsCapturedAndRecordedAsTheHandlerSetIt() throws Exception {
        HttpResponse<String> first = firstOfTwo("/v1/raw", "application/json", "{}");
        assertThat(first.statusCode()).isEqualTo(402);
        assertThat(first.body()).isEqualTo("declined, run 1");
    }

    @Test
    void aHandlerThatSetNoStatusReadsTheServersDefaultAsItWouldUnguarded() throws Exception {
        HttpResponse<String> unguarded = CLIENT.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/status"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> guarded = post("/v1/status", "k-" + UUID.randomUUID(), "application/json", "{}");
        assertThat(unguarded.body()).isEqualTo("status 200 OK");
        assertThat(guarded.statusCode()).isEqualTo(200);
        assertThat(guarded.body())
                .as("what the capture reports is what it records")
                .isEqualTo(unguarded.body());
    }

    @Test
    void theHandlerReadsTheFormThroughTheExchange() throws Exception {
        HttpResponse<String> first = firstOfTwo("/v1/form", "application/x-www-form-urlencoded", "a=1&b=caf%C3%A9");
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).isEqualTo("a=1&b=café");
    }
}
