package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Edges of the servlet filter on Tomcat: a client gone while its large response streams, a form body parsed
 * by a filter ahead of the guard, a {@code ?} spelled into the path, an encoded body's header on replay.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServletEdgeTest {
    private static final int STORED = 16 * 1024;

    private final TestApp app = new TestApp();
    private final TestApp behindAFormReader = new TestApp();
    private TestServer server;
    private TestServer formReadFirst;

    private static IdempotencyFilter filter() {
        return IdempotencyFilter.builder(IdempotencyEngine.builder(InMemoryIdempotencyStore.create())
                        .build())
                .route(IdempotentRoute.post("/v1/charges"))
                .route(IdempotentRoute.post("/v1/orders/{id}"))
                .tenantResolver(TenantResolver.apiKeys(Map.of("sk_a", "tenant-a")))
                .maxRequestBodyBytes(8 * 1024)
                .maxStoredResponseBytes(STORED)
                .build();
    }

    @BeforeAll
    void start() throws Exception {
        server = TestServer.start(app, filter());
        // ahead of the guard, a filter that reads a parameter (a CSRF check, a logging filter, Spring's
        // FormContentFilter): the container parses the form body, and the stream is empty after it
        Filter readsAParameter = (request, response, chain) -> {
            ((HttpServletRequest) request).getParameter("_csrf");
            chain.doFilter(request, response);
        };
        formReadFirst = TestServer.start(behindAFormReader, readsAParameter, filter());
    }

    @AfterAll
    void stop() throws Exception {
        server.close();
        formReadFirst.close();
    }

    @BeforeEach
    void reset() {
        app.executions.set(0);
        behindAFormReader.executions.set(0);
    }

    @Test
    void aClientGoneWhileItsLargeResponseStreamsLeavesTheHandlerToFinishAndTheRetryGetsItsRecord() throws Exception {
        CountDownLatch clientGone = new CountDownLatch(1);
        CountDownLatch handlerDone = new CountDownLatch(1);
        AtomicReference<Throwable> handlerSaw = new AtomicReference<>();
        app.handler((request, response) -> {
            try {
                response.setStatus(201);
                response.setContentType("application/octet-stream");
                OutputStream out = response.getOutputStream();
                byte[] chunk = new byte[4096];
                for (int i = 0; i < 6; i++) { // past the storage limit: the head and these bytes go out
                    out.write(chunk);
                }
                out.flush();
                if (request.getHeader("X-First") != null) {
                    clientGone.await(10, TimeUnit.SECONDS);
                    for (int i = 0; i < 20_000; i++) { // up to 80 MiB into a reset connection
                        out.write(chunk);
                    }
                    out.flush();
                }
            } catch (Throwable t) {
                handlerSaw.set(t);
                throw t;
            } finally {
                handlerDone.countDown();
            }
        });
        String key = "k-" + UUID.randomUUID();
        URI uri = server.uri("/v1/charges");
        String body = "{\"amount\":1}";
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/charges HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk_a\r\nIdempotency-Key: "
                            + key + "\r\nX-First: 1\r\nContent-Type: application/json\r\nContent-Length: "
                            + body.length() + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII))
                    .isEqualTo("HTTP/1.1 201");
            socket.setSoLinger(true, 0); // closed with a reset
        }
        clientGone.countDown();
        assertThat(handlerDone.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(handlerSaw.get())
                .as("the handler is not failed by the departed client")
                .isNull();

        // the handler returned; its outcome is recorded right after (until then the key is in flight: 409)
        HttpResponse<byte[]> retry = await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(
                        () -> Call.post(server, "/v1/charges")
                                .key(key)
                                .apiKey("sk_a")
                                .json(body)
                                .send(),
                        r -> r.statusCode() != 409);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(Call.text(retry)).contains("response_not_stored");
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void aFormParsedAheadOfTheGuardIsFingerprintedAndHandedToTheHandler() throws Exception {
        behindAFormReader.handler((request, response) -> {
            response.setStatus(201);
            response.setContentType("text/plain");
            response.getWriter().write("amount=" + request.getParameter("amount"));
        });
        String key = "k-" + UUID.randomUUID();
        HttpResponse<byte[]> first = Call.post(formReadFirst, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .form("amount=100")
                .send();
        HttpResponse<byte[]> retry = Call.post(formReadFirst, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .form("amount=100")
                .send();
        HttpResponse<byte[]> other = Call.post(formReadFirst, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .form("amount=999999")
                .send();
        assertThat(Call.text(first)).isEqualTo("amount=100");
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(other.statusCode()).as("another form under the same key").isEqualTo(422);
        assertThat(behindAFormReader.executions).hasValue(1);
    }

    @Test
    void aQuestionMarkSpelledIntoThePathIsNotAQuery() throws Exception {
        app.handler((request, response) -> {
            response.setStatus(201);
            response.setContentType("text/plain");
            response.getWriter().write("id=" + request.getServletPath() + " query=" + request.getQueryString());
        });
        String key = "k-" + UUID.randomUUID();
        HttpResponse<byte[]> encoded = Call.post(server, "/v1/orders/o1%3Fcapture=true")
                .key(key)
                .apiKey("sk_a")
                .json("{}")
                .send();
        HttpResponse<byte[]> query = Call.post(server, "/v1/orders/o1?capture=true")
                .key(key)
                .apiKey("sk_a")
                .json("{}")
                .send();
        assertThat(encoded.statusCode()).isEqualTo(201);
        assertThat(query.statusCode()).as("another resource under the same key").isEqualTo(422);
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void anEncodedBodyIsReplayedWithItsContentEncoding() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(bytes)) {
            gzip.write("{\"id\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8));
        }
        byte[] gzipped = bytes.toByteArray();
        app.handler((request, response) -> {
            response.setStatus(201);
            response.setContentType("application/json");
            response.setHeader("Content-Encoding", "gzip");
            response.getOutputStream().write(gzipped);
        });
        String key = "k-" + UUID.randomUUID();
        HttpResponse<byte[]> first = Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .json("{}")
                .send();
        HttpResponse<byte[]> replay = Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .json("{}")
                .send();
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.headers().firstValue("Content-Encoding")).hasValue("gzip");
        assertThat(replay.body()).isEqualTo(first.body()).isEqualTo(gzipped);
    }

    @Test
    void aHandlerThatFailsAfterItsHeadWasStreamedRanAndIsNotRunAgain() throws Exception {
        app.handler((request, response) -> {
            response.setStatus(201);
            OutputStream out = response.getOutputStream();
            out.write(new byte[STORED + 100]); // the head and a first part go out
            out.flush();
            throw new IllegalStateException("failed in the middle of its body");
        });
        String key = "k-" + UUID.randomUUID();
        try {
            HttpResponse<byte[]> broken = Call.post(server, "/v1/charges")
                    .key(key)
                    .apiKey("sk_a")
                    .json("{}")
                    .send();
            assertThat(broken.body().length).as("the response was broken off").isLessThan(STORED + 100);
        } catch (java.io.IOException brokenOff) {
            // the client saw the response broken off: what a failure after the head must look like
        }
        HttpResponse<byte[]> retry = Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .json("{}")
                .send();
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(Call.text(retry)).contains("response_not_stored");
        assertThat(app.executions).hasValue(1);
    }
}
