package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.Lease;
import jakarta.servlet.http.Cookie;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/** The filter over real HTTP: an embedded Tomcat, the JDK client, and each store. */
@ParameterizedClass(name = "{0}")
@MethodSource("dev.exactly.idempotency.servlet.StoreFixture#all")
class IdempotencyFilterHttpTest {
    static final int MAX_REQUEST_BODY = 8 * 1024;
    static final int MAX_STORED_RESPONSE = 16 * 1024;
    /** The lease of {@code /v1/slow}, whose handler runs for several of them. */
    static final Duration SLOW_ROUTE_LEASE = Duration.ofMillis(1500);

    @Parameter
    StoreFixture fixture;

    // one server per store, shared by the tests of that store (they run one after another)
    private static StoreFixture.Opened store;
    private static TestServer server;
    private static final TestApp app = new TestApp();
    private static final TestApp.Arrivals arrivals = new TestApp.Arrivals();
    private static final CountingListener listener = new CountingListener();

    @BeforeParameterizedClassInvocation
    static void start(StoreFixture fixture) throws Exception {
        store = fixture.opener().get();
        IdempotencyEngine engine =
                IdempotencyEngine.builder(store.store()).listener(listener).build();
        IdempotencyFilter filter = IdempotencyFilter.builder(engine)
                .route(IdempotentRoute.post("/v1/charges"))
                .route(IdempotentRoute.builder("POST", "/v1/coalesced")
                        .policy(IdempotencyPolicy.custom()
                                .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(20)))
                                .build())
                        .build())
                .route(IdempotentRoute.post("/v1/charges/{id}/refunds"))
                .route(IdempotentRoute.builder("POST", "/v1/slow")
                        .policy(IdempotencyPolicy.custom()
                                .lease(SLOW_ROUTE_LEASE)
                                .build())
                        .build())
                .route(IdempotentRoute.builder("POST", "/v1/stripe")
                        .recordServerErrors(true)
                        .build())
                .route(IdempotentRoute.builder("POST", "/v1/optional")
                        .keyRequired(false)
                        .build())
                .tenantResolver(TenantResolver.apiKeys(Map.of("sk_a", "tenant-a", "sk_b", "tenant-b"))
                        .orElse(TenantResolver.principal()))
                .maxRequestBodyBytes(MAX_REQUEST_BODY)
                .maxStoredResponseBytes(MAX_STORED_RESPONSE)
                .replayHeaders("X-Request-Cost", "Set-Cookie")
                .credentialHeaders("X-Session-Token", "X-Request-Cost-Secret")
                .build();
        server = TestServer.start(app, arrivals, new TestApp.FakeAuthentication(), filter);
    }

    @AfterParameterizedClassInvocation
    static void stop() throws Exception {
        server.close();
        store.close();
    }

    @BeforeEach
    void reset() {
        app.executions.set(0);
        app.handler((request, response) -> response.setStatus(204));
        arrivals.onArrival = () -> {};
        listener.reset();
    }

    private static String newKey() {
        return "key-" + UUID.randomUUID();
    }

    private Call charge(String key) {
        return Call.post(server, "/v1/charges").key(key).apiKey("sk_a").json("{\"amount\":100,\"currency\":\"EUR\"}");
    }

    private static void assertProblem(HttpResponse<byte[]> response, int status, String slug, String code) {
        assertThat(response.statusCode()).as(Call.text(response)).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValue(Problem.MEDIA_TYPE);
        assertThat(Json.topLevelString(response.body(), "type")).isEqualTo("https://exactly.dev/problems/" + slug);
        assertThat(Json.topLevelString(response.body(), "code")).isEqualTo(code);
        assertThat(Call.text(response))
                .contains("\"status\":" + status)
                .contains("\"title\":")
                .contains("\"detail\":");
    }

    private static boolean replayed(HttpResponse<byte[]> response) {
        return response.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER).isPresent();
    }

    // ---- capture and replay -----------------------------------------------------------------------

    @Test
    void replayIsByteIdenticalWithAllowListedHeadersOnly() throws Exception {
        byte[] payload = new byte[3000];
        new Random(42).nextBytes(payload);
        AtomicInteger leaseSeen = new AtomicInteger();
        app.handler((request, response) -> {
            if (request.getAttribute(IdempotencyFilter.LEASE) instanceof Lease lease
                    && lease.renew(Duration.ofSeconds(30))) {
                leaseSeen.incrementAndGet();
            }
            response.setStatus(201);
            response.setContentType("application/octet-stream");
            response.setHeader("Location", "/v1/charges/ch_1");
            response.setHeader("ETag", "\"v1\"");
            response.setHeader("Cache-Control", "no-cache");
            response.addHeader("Link", "</v1/charges/ch_1/refunds>; rel=\"refunds\"");
            response.setHeader("X-Request-Cost", "3");
            response.setHeader("X-Session-Token", "secret-session");
            response.setHeader("X-Unlisted", "first-caller-only");
            response.addHeader("Set-Cookie", "session=abc; HttpOnly");
            response.addCookie(new Cookie("other", "xyz"));
            response.setContentLength(payload.length);
            response.getOutputStream().write(payload);
        });
        String key = newKey();

        HttpResponse<byte[]> first = charge(key).send();
        HttpResponse<byte[]> second = charge(key).send();

        assertThat(app.executions).hasValue(1);
        assertThat(leaseSeen).hasValue(1);
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).isEqualTo(payload);
        assertThat(first.headers().allValues("Set-Cookie")).hasSize(2);
        assertThat(first.headers().firstValue("X-Unlisted")).hasValue("first-caller-only");
        assertThat(first.headers().firstValue("X-Session-Token")).hasValue("secret-session");
        assertThat(replayed(first)).isFalse();

        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.body()).isEqualTo(payload);
        assertThat(second.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER))
                .hasValue("true");
        assertThat(second.headers().firstValue(IdempotencyFilter.LEGACY_REPLAYED_HEADER))
                .hasValue("true");
        assertThat(second.headers().firstValue("Content-Type")).hasValue("application/octet-stream");
        assertThat(second.headers().firstValue("Location")).hasValue("/v1/charges/ch_1");
        assertThat(second.headers().firstValue("ETag")).hasValue("\"v1\"");
        assertThat(second.headers().firstValue("Cache-Control")).hasValue("no-cache");
        assertThat(second.headers().firstValue("Link")).hasValue("</v1/charges/ch_1/refunds>; rel=\"refunds\"");
        assertThat(second.headers().firstValue("X-Request-Cost")).hasValue("3");
        assertThat(second.headers().allValues("Set-Cookie"))
                .as("deny-list beats the allow-list")
                .isEmpty();
        assertThat(second.headers().firstValue("X-Session-Token")).isEmpty();
        assertThat(second.headers().firstValue("X-Unlisted")).isEmpty();

        Instant firstExpiry = HttpDates.parse(
                first.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER).orElseThrow());
        Instant secondExpiry = HttpDates.parse(
                second.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER).orElseThrow());
        Instant expected = Instant.now().plus(IdempotencyPolicy.DEFAULT_RETENTION);
        assertThat(firstExpiry).isBetween(expected.minusSeconds(60), expected.plusSeconds(60));
        assertThat(Duration.between(firstExpiry, secondExpiry).abs()).isLessThanOrEqualTo(Duration.ofSeconds(2));
        assertThat(listener.claims).hasValue(1);
        assertThat(listener.replays).hasValue(1);
    }

    @Test
    void writerFlushBufferAndCharsetAreCaptured() throws Exception {
        app.handler((request, response) -> {
            response.setStatus(201);
            response.setContentType("application/json");
            response.setCharacterEncoding("UTF-8");
            PrintWriter writer = response.getWriter();
            writer.print("{\"greeting\":\"Grüß dich, 世界 \uD83D\uDE00\"");
            response.flushBuffer();
            response.setHeader("X-Too-Late", "ignored after commit");
            writer.print(",\"n\":1}");
        });
        String key = newKey();

        HttpResponse<byte[]> first = charge(key).send();
        HttpResponse<byte[]> second = charge(key).send();

        String expected = "{\"greeting\":\"Grüß dich, 世界 \uD83D\uDE00\",\"n\":1}";
        assertThat(first.body()).isEqualTo(expected.getBytes(StandardCharsets.UTF_8));
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(first.headers().firstValue("Content-Type")).hasValue("application/json;charset=UTF-8");
        assertThat(second.headers().firstValue("Content-Type")).hasValue("application/json;charset=UTF-8");
        assertThat(first.headers().firstValue("X-Too-Late")).isEmpty();
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void resetAndResetBufferDiscardWhatWasNotCommitted() throws Exception {
        app.handler((request, response) -> {
            response.setStatus(500);
            response.setHeader("Location", "/wrong");
            response.getOutputStream().write("discarded by reset".getBytes(StandardCharsets.UTF_8));
            response.reset();
            response.setStatus(202);
            response.setContentType("text/plain");
            response.getOutputStream().write("discarded by resetBuffer".getBytes(StandardCharsets.UTF_8));
            response.resetBuffer();
            response.getOutputStream().write("kept".getBytes(StandardCharsets.UTF_8));
            response.getOutputStream().close();
            response.getOutputStream().write(" written after close".getBytes(StandardCharsets.UTF_8));
        });
        String key = newKey();

        HttpResponse<byte[]> first = charge(key).send();
        HttpResponse<byte[]> second = charge(key).send();

        for (HttpResponse<byte[]> response : List.of(first, second)) {
            assertThat(response.statusCode()).isEqualTo(202);
            assertThat(Call.text(response)).isEqualTo("kept");
            assertThat(response.headers().firstValue("Location")).isEmpty();
            assertThat(response.headers().firstValue("Content-Type")).hasValue("text/plain");
        }
        assertThat(replayed(second)).isTrue();
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void sendErrorIsRecordedAsAFailureAndReplayed() throws Exception {
        app.handler((request, response) -> response.sendError(404, "no such customer"));
        String key = newKey();

        HttpResponse<byte[]> first = charge(key).send();
        HttpResponse<byte[]> second = charge(key).send();

        assertThat(first.statusCode()).isEqualTo(404);
        assertThat(Json.topLevelString(first.body(), "type")).isEqualTo("about:blank");
        assertThat(Json.topLevelString(first.body(), "detail")).isEqualTo("no such customer");
        assertThat(second.statusCode()).isEqualTo(404);
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(replayed(second)).isTrue();
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void sendRedirectIsCompletedAndReplayedWithItsLocation() throws Exception {
        app.handler((request, response) -> response.sendRedirect("/v1/charges/ch_9", 303));
        String key = newKey();

        HttpResponse<byte[]> first = charge(key).send();
        HttpResponse<byte[]> second = charge(key).send();

        assertThat(first.statusCode()).isEqualTo(303);
        assertThat(second.statusCode()).isEqualTo(303);
        assertThat(second.headers().firstValue("Location"))
                .isEqualTo(first.headers().firstValue("Location"));
        assertThat(second.headers().firstValue("Location").orElseThrow()).endsWith("/v1/charges/ch_9");
        assertThat(replayed(second)).isTrue();
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void aResponseTooLargeToStoreReachesTheFirstCallerAndIsNeverReExecuted() throws Exception {
        byte[] big = new byte[MAX_STORED_RESPONSE * 3 + 17];
        new Random(7).nextBytes(big);
        app.handler((request, response) -> {
            response.setStatus(201);
            response.setContentType("application/octet-stream");
            response.setHeader("Location", "/v1/exports/ex_1");
            response.setHeader("ETag", "\"big\"");
            for (int off = 0; off < big.length; off += 1000) {
                response.getOutputStream().write(big, off, Math.min(1000, big.length - off));
            }
        });
        String key = newKey();

        HttpResponse<byte[]> first = charge(key).send();
        HttpResponse<byte[]> second = charge(key).send();

        assertThat(app.executions).hasValue(1);
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).isEqualTo(big);
        assertThat(first.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isPresent();
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(replayed(second)).isTrue();
        assertThat(second.headers().firstValue("Location")).hasValue("/v1/exports/ex_1");
        assertThat(second.headers().firstValue("ETag"))
                .as("describes the body that was not kept")
                .isEmpty();
        assertThat(second.headers().firstValue("Content-Type")).hasValue(Problem.MEDIA_TYPE);
        assertThat(Json.topLevelString(second.body(), "type"))
                .isEqualTo("https://exactly.dev/problems/response-not-stored");
        assertThat(Json.topLevelString(second.body(), "code")).isEqualTo("response_not_stored");
        assertThat(Call.text(second)).contains("executed").contains(Integer.toString(big.length));
    }

    // ---- concurrency ------------------------------------------------------------------------------

    @Test
    void fiftyConcurrentDuplicatesRunTheHandlerOnceAndTheRestGetConflicts() throws Exception {
        int n = 50;
        CountDownLatch othersAnswered = new CountDownLatch(n - 1);
        app.handler((request, response) -> {
            othersAnswered.await(20, TimeUnit.SECONDS);
            response.setStatus(201);
            response.getOutputStream().write("charged once".getBytes(StandardCharsets.UTF_8));
        });
        String key = newKey();

        List<CompletableFuture<HttpResponse<byte[]>>> calls = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            calls.add(charge(key).sendAsync().whenComplete((r, e) -> {
                if (r != null && r.statusCode() == 409) {
                    othersAnswered.countDown();
                }
            }));
        }
        List<HttpResponse<byte[]>> responses =
                calls.stream().map(CompletableFuture::join).toList();

        assertThat(app.executions).hasValue(1);
        assertThat(responses).filteredOn(r -> r.statusCode() == 201).hasSize(1);
        List<HttpResponse<byte[]>> conflicts =
                responses.stream().filter(r -> r.statusCode() == 409).toList();
        assertThat(conflicts).hasSize(n - 1);
        for (HttpResponse<byte[]> conflict : conflicts) {
            assertProblem(conflict, 409, "idempotency-key-in-use", "idempotency_key_in_use");
            assertThat(conflict.headers().firstValue("Retry-After")).hasValue("1");
        }
        assertThat(listener.claims).hasValue(1);
        assertThat(listener.conflicts).hasValue(n - 1);

        HttpResponse<byte[]> retry = charge(key).send();
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(Call.text(retry)).isEqualTo("charged once");
        assertThat(replayed(retry)).isTrue();
    }

    @Test
    void fiftyConcurrentDuplicatesUnderTheWaitPolicyAllGetTheReplay() throws Exception {
        int n = 50;
        CountDownLatch allArrived = new CountDownLatch(n);
        arrivals.onArrival = allArrived::countDown;
        app.handler((request, response) -> {
            assertThat(allArrived.await(20, TimeUnit.SECONDS)).isTrue();
            response.setStatus(201);
            response.setContentType("text/plain");
            response.getOutputStream().write(("charge " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
        });
        String key = newKey();

        List<CompletableFuture<HttpResponse<byte[]>>> calls = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            calls.add(Call.post(server, "/v1/coalesced")
                    .key(key)
                    .apiKey("sk_a")
                    .json("{\"amount\":5}")
                    .sendAsync());
        }
        List<HttpResponse<byte[]>> responses =
                calls.stream().map(CompletableFuture::join).toList();

        assertThat(app.executions).hasValue(1);
        assertThat(responses).allSatisfy(r -> assertThat(r.statusCode()).isEqualTo(201));
        assertThat(responses.stream().map(r -> Call.text(r)).distinct()).hasSize(1);
        assertThat(responses).filteredOn(IdempotencyFilterHttpTest::replayed).hasSize(n - 1);
        assertThat(listener.claims).hasValue(1);
        assertThat(listener.replays).hasValue(n - 1);
        assertThat(listener.conflicts).hasValue(0);
    }

    @Test
    void aHandlerRunningForThreeLeasesRunsOnceWhileItsDuplicatesGet409() throws Exception {
        CountDownLatch finish = new CountDownLatch(1);
        AtomicInteger lostSeen = new AtomicInteger();
        app.handler((request, response) -> {
            Lease lease = (Lease) request.getAttribute(IdempotencyFilter.LEASE);
            assertThat(finish.await(60, TimeUnit.SECONDS)).isTrue();
            if (lease.isLost()) {
                lostSeen.incrementAndGet();
            }
            response.setStatus(201);
            response.getWriter().print("slow charge done");
        });
        String key = newKey();
        Call slow = Call.post(server, "/v1/slow").key(key).apiKey("sk_a").json("{\"amount\":100}");

        CompletableFuture<HttpResponse<byte[]>> first = slow.sendAsync();
        await().atMost(Duration.ofSeconds(10)).until(() -> app.executions.get() == 1);
        // three leases pass: the engine renews the lease, so every retry finds the key in flight
        Duration threeLeases = SLOW_ROUTE_LEASE.multipliedBy(3);
        AtomicInteger duplicates = new AtomicInteger();
        await().during(threeLeases)
                .atMost(threeLeases.plusSeconds(20))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> {
                    HttpResponse<byte[]> duplicate = slow.send();
                    duplicates.incrementAndGet();
                    assertProblem(duplicate, 409, "idempotency-key-in-use", "idempotency_key_in_use");
                    return app.executions.get() == 1;
                });
        finish.countDown();
        HttpResponse<byte[]> answer = first.get(30, TimeUnit.SECONDS);

        assertThat(answer.statusCode()).isEqualTo(201);
        assertThat(Call.text(answer)).isEqualTo("slow charge done");
        assertThat(replayed(answer)).isFalse();
        assertThat(lostSeen).hasValue(0);
        HttpResponse<byte[]> retry = slow.send();
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(replayed(retry)).isTrue();
        assertThat(app.executions).hasValue(1);
        assertThat(listener.claims).hasValue(1);
        assertThat(listener.conflicts).hasValue(duplicates.get());
        assertThat(listener.renewed.get()).isGreaterThanOrEqualTo(3);
    }

    // ---- keys -------------------------------------------------------------------------------------

    @Test
    void aDifferentPayloadUnderTheSameKeyIs422() throws Exception {
        app.handler((request, response) -> response.setStatus(201));
        String key = newKey();

        assertThat(Call.post(server, "/v1/charges")
                        .key(key)
                        .apiKey("sk_a")
                        .json("{\"amount\":100,\"currency\":\"EUR\"}")
                        .send()
                        .statusCode())
                .isEqualTo(201);
        HttpResponse<byte[]> reordered = Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .json(" { \"currency\" : \"EUR\", \"amount\" : 100.0 } ")
                .send();
        HttpResponse<byte[]> different = Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .json("{\"amount\":200,\"currency\":\"EUR\"}")
                .send();

        assertThat(reordered.statusCode())
                .as("JCS: same JSON, different spelling")
                .isEqualTo(201);
        assertThat(replayed(reordered)).isTrue();
        assertProblem(different, 422, "idempotency-key-reused", "idempotency_key_reused");
        assertThat(app.executions).hasValue(1);
        assertThat(listener.mismatches).hasValue(1);
    }

    @Test
    void theSameKeyOnAnotherResourceOfTheSameTemplateIsAMismatchNotAReplay() throws Exception {
        app.handler((request, response) -> {
            response.setStatus(201);
            response.getWriter().print("refund of " + request.getRequestURI());
        });
        String key = newKey();

        HttpResponse<byte[]> first = Call.post(server, "/v1/charges/ch_1/refunds")
                .key(key)
                .apiKey("sk_a")
                .json("{}")
                .send();
        HttpResponse<byte[]> again = Call.post(server, "/v1/charges/ch_1/refunds")
                .key(key)
                .apiKey("sk_a")
                .json("{}")
                .send();
        HttpResponse<byte[]> other = Call.post(server, "/v1/charges/ch_2/refunds")
                .key(key)
                .apiKey("sk_a")
                .json("{}")
                .send();

        assertThat(Call.text(first)).isEqualTo("refund of /v1/charges/ch_1/refunds");
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(replayed(again)).isTrue();
        assertProblem(other, 422, "idempotency-key-reused", "idempotency_key_reused");
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void aMissingKeyIs400AndTheHandlerIsNotCalled() throws Exception {
        HttpResponse<byte[]> response =
                Call.post(server, "/v1/charges").apiKey("sk_a").json("{}").send();

        assertProblem(response, 400, "idempotency-key-missing", "idempotency_key_missing");
        assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
        assertThat(app.executions).hasValue(0);
    }

    @Test
    void malformedKeysAre400() throws Exception {
        List<String> malformed = List.of("k".repeat(256), "\"\"", "\"unterminated", "\"a\"b\"", "\"bad\\escape\"");
        for (String key : malformed) {
            HttpResponse<byte[]> response = charge(key).send();
            assertThat(response.statusCode()).as(key).isEqualTo(400);
            assertProblem(response, 400, "idempotency-key-invalid", "idempotency_key_invalid");
        }
        assertThat(charge("k".repeat(255)).send().statusCode())
                .as("255 characters is the limit, not over it")
                .isEqualTo(204);
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void aNonAsciiKeyIs400() throws Exception {
        // The JDK client cannot put non-ASCII bytes in a header, so this request is written by hand.
        String head = "POST /v1/charges HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk_a\r\n"
                + "Content-Length: 0\r\nConnection: close\r\nIdempotency-Key: ";
        byte[] key = "caf\u00e9-\u4e16\u754c".getBytes(StandardCharsets.UTF_8);
        try (Socket socket =
                new Socket(InetAddress.getLoopbackAddress(), server.uri("/").getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(key);
            out.write("\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(response)
                    .startsWith("HTTP/1.1 400")
                    .contains(Problem.MEDIA_TYPE)
                    .contains("idempotency_key_invalid");
        }
        assertThat(app.executions).hasValue(0);
    }

    @Test
    void quotedAndBareKeysAreTheSameKey() throws Exception {
        app.handler((request, response) -> response.setStatus(201));
        String key = newKey();

        HttpResponse<byte[]> quoted = charge("\"" + key + "\"").send();
        HttpResponse<byte[]> bare = charge(key).send();

        assertThat(replayed(quoted)).isFalse();
        assertThat(bare.statusCode()).isEqualTo(201);
        assertThat(replayed(bare)).isTrue();
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void theAliasHeaderNamesTheSameKeyAndDisagreeingHeadersAre400() throws Exception {
        app.handler((request, response) -> response.setStatus(201));
        String key = newKey();
        String json = "{\"amount\":100,\"currency\":\"EUR\"}";

        HttpResponse<byte[]> alias = Call.post(server, "/v1/charges")
                .header(IdempotencyFilter.KEY_ALIAS_HEADER, key)
                .apiKey("sk_a")
                .json(json)
                .send();
        HttpResponse<byte[]> standard = charge(key).send();
        HttpResponse<byte[]> both = Call.post(server, "/v1/charges")
                .key(key)
                .header(IdempotencyFilter.KEY_ALIAS_HEADER, "\"" + key + "\"")
                .apiKey("sk_a")
                .json(json)
                .send();
        HttpResponse<byte[]> disagreeing = Call.post(server, "/v1/charges")
                .key(key)
                .header(IdempotencyFilter.KEY_ALIAS_HEADER, key + "-other")
                .apiKey("sk_a")
                .json(json)
                .send();

        assertThat(alias.statusCode()).isEqualTo(201);
        assertThat(replayed(standard)).isTrue();
        assertThat(replayed(both)).isTrue();
        assertProblem(disagreeing, 400, "idempotency-key-invalid", "idempotency_key_invalid");
        assertThat(app.executions).hasValue(1);
    }

    // ---- tenants ----------------------------------------------------------------------------------

    @Test
    void twoTenantsWithTheSameKeyNeverSeeEachOthersResponses() throws Exception {
        app.handler((request, response) -> {
            response.setStatus(201);
            response.getWriter()
                    .print("for " + request.getHeader("Authorization").substring(7) + " #" + app.executions.get());
        });
        String key = newKey();
        String json = "{\"amount\":100}";

        HttpResponse<byte[]> a1 = Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .json(json)
                .send();
        HttpResponse<byte[]> b1 = Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_b")
                .json(json)
                .send();
        HttpResponse<byte[]> a2 = Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .json(json)
                .send();
        HttpResponse<byte[]> b2 = Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_b")
                .json(json)
                .send();

        assertThat(app.executions).hasValue(2);
        assertThat(Call.text(a1)).isEqualTo("for sk_a #1");
        assertThat(Call.text(b1)).isEqualTo("for sk_b #2");
        assertThat(Call.text(a2)).isEqualTo("for sk_a #1");
        assertThat(Call.text(b2)).isEqualTo("for sk_b #2");
        assertThat(replayed(a1) || replayed(b1)).isFalse();
        assertThat(replayed(a2) && replayed(b2)).isTrue();
    }

    @Test
    void theAuthenticatedPrincipalIsATenant() throws Exception {
        app.handler((request, response) ->
                response.getWriter().print("hello " + request.getUserPrincipal().getName()));
        String key = newKey();

        HttpResponse<byte[]> alice = Call.post(server, "/v1/charges")
                .key(key)
                .header("X-Test-User", "alice")
                .json("{}")
                .send();
        HttpResponse<byte[]> bob = Call.post(server, "/v1/charges")
                .key(key)
                .header("X-Test-User", "bob")
                .json("{}")
                .send();

        assertThat(Call.text(alice)).isEqualTo("hello alice");
        assertThat(Call.text(bob)).isEqualTo("hello bob");
        assertThat(app.executions).hasValue(2);
    }

    @Test
    void noTenantIs401AndAnUnknownApiKeyIsNoTenant() throws Exception {
        HttpResponse<byte[]> anonymous =
                Call.post(server, "/v1/charges").key(newKey()).json("{}").send();
        HttpResponse<byte[]> unknown = Call.post(server, "/v1/charges")
                .key(newKey())
                .apiKey("sk_nope")
                .json("{}")
                .send();

        assertProblem(anonymous, 401, "tenant-unresolved", "tenant_unresolved");
        assertThat(anonymous.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
        assertProblem(unknown, 401, "tenant-unresolved", "tenant_unresolved");
        assertThat(app.executions).hasValue(0);
    }

    // ---- what is recorded -------------------------------------------------------------------------

    @Test
    void aHandlerThatThrowsReleasesTheKeySoTheRetryRuns() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        app.handler((request, response) -> {
            if (calls.incrementAndGet() == 1) {
                response.setStatus(201);
                response.getWriter().print("half-written");
                throw new IllegalStateException("bank connection reset");
            }
            response.setStatus(201);
            response.getWriter().print("charged");
        });
        String key = newKey();

        HttpResponse<byte[]> failed = charge(key).send();
        HttpResponse<byte[]> retry = charge(key).send();
        HttpResponse<byte[]> replay = charge(key).send();

        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(Call.text(failed)).doesNotContain("half-written");
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(Call.text(retry)).isEqualTo("charged");
        assertThat(replayed(retry)).isFalse();
        assertThat(Call.text(replay)).isEqualTo("charged");
        assertThat(replayed(replay)).isTrue();
        assertThat(app.executions).hasValue(2);
        assertThat(listener.released).hasValue(1);
    }

    @Test
    void serverErrorsAreReleasedUnlessTheRouteRecordsThem() throws Exception {
        app.handler((request, response) -> {
            response.setStatus(503);
            response.getWriter().print("processor down");
        });
        String released = newKey();
        String recorded = newKey();

        HttpResponse<byte[]> r1 = charge(released).send();
        HttpResponse<byte[]> r2 = charge(released).send();
        HttpResponse<byte[]> s1 = Call.post(server, "/v1/stripe")
                .key(recorded)
                .apiKey("sk_a")
                .json("{}")
                .send();
        HttpResponse<byte[]> s2 = Call.post(server, "/v1/stripe")
                .key(recorded)
                .apiKey("sk_a")
                .json("{}")
                .send();

        assertThat(r1.statusCode()).isEqualTo(503);
        assertThat(r2.statusCode()).isEqualTo(503);
        assertThat(replayed(r2)).as("released: the retry ran again").isFalse();
        assertThat(r1.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER))
                .as("nothing recorded")
                .isEmpty();
        assertThat(s2.statusCode()).isEqualTo(503);
        assertThat(replayed(s2)).as("recordServerErrors: replayed").isTrue();
        assertThat(s2.body()).isEqualTo(s1.body());
        assertThat(app.executions).hasValue(3);
    }

    @Test
    void validationFailuresAndMarkedResponsesAreNotRecordedButBusinessErrorsAre() throws Exception {
        app.handler((request, response) -> {
            String kind = request.getParameter("kind");
            switch (kind) {
                case "validation" -> {
                    Problem problem = Problems.validationFailed("amount must be positive")
                            .with("errors", List.of(Map.of("field", "amount", "message", "must be positive")));
                    response.setStatus(422);
                    response.setContentType(Problem.MEDIA_TYPE);
                    response.getOutputStream().write(problem.toJson());
                }
                case "business422" -> {
                    response.setStatus(422);
                    response.setContentType("application/json");
                    response.getWriter().print("{\"type\":\"https://example.com/insufficient-funds\"}");
                }
                case "marked" -> {
                    request.setAttribute(IdempotencyFilter.DO_NOT_RECORD, true);
                    response.setStatus(400);
                }
                case "decline" -> {
                    response.setStatus(402);
                    response.getWriter().print("card declined");
                }
                case "unauthorized" -> response.setStatus(401);
                case "forbidden" -> response.setStatus(403);
                case "throttled" -> response.setStatus(429);
                case "conflict" -> response.setStatus(409);
                default -> throw new IllegalArgumentException(kind);
            }
        });
        Map<String, Boolean> replayedOnRetry = new java.util.LinkedHashMap<>();
        for (String kind : List.of(
                "validation",
                "business422",
                "marked",
                "decline",
                "unauthorized",
                "forbidden",
                "throttled",
                "conflict")) {
            String key = newKey();
            HttpResponse<byte[]> first = Call.post(server, "/v1/charges?kind=" + kind)
                    .key(key)
                    .apiKey("sk_a")
                    .json("{}")
                    .send();
            HttpResponse<byte[]> second = Call.post(server, "/v1/charges?kind=" + kind)
                    .key(key)
                    .apiKey("sk_a")
                    .json("{}")
                    .send();
            assertThat(second.statusCode()).isEqualTo(first.statusCode());
            assertThat(second.body()).isEqualTo(first.body());
            replayedOnRetry.put(kind, replayed(second));
        }

        assertThat(replayedOnRetry)
                .isEqualTo(Map.of(
                        "validation",
                        false,
                        "business422",
                        true,
                        "marked",
                        false,
                        "decline",
                        true,
                        "unauthorized",
                        false,
                        "forbidden",
                        false,
                        "throttled",
                        false,
                        "conflict",
                        true));
        assertThat(app.executions).hasValue(8 + 5);
    }

    // ---- bodies -----------------------------------------------------------------------------------

    @Test
    void anOversizedBodyIs413WhetherDeclaredOrChunked() throws Exception {
        byte[] tooBig = new byte[MAX_REQUEST_BODY + 1];
        Arrays.fill(tooBig, (byte) 'x');

        HttpResponse<byte[]> declared = Call.post(server, "/v1/charges")
                .key(newKey())
                .apiKey("sk_a")
                .bytes(tooBig)
                .send();
        HttpResponse<byte[]> chunked = Call.post(server, "/v1/charges")
                .key(newKey())
                .apiKey("sk_a")
                .chunked(tooBig)
                .send();
        HttpResponse<byte[]> atLimit = Call.post(server, "/v1/charges")
                .key(newKey())
                .apiKey("sk_a")
                .chunked(Arrays.copyOf(tooBig, MAX_REQUEST_BODY))
                .send();

        assertProblem(declared, 413, "payload-too-large", "payload_too_large");
        assertProblem(chunked, 413, "payload-too-large", "payload_too_large");
        assertThat(atLimit.statusCode()).isEqualTo(204);
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void theHandlerReadsTheCachedBodyAndFormParameters() throws Exception {
        app.handler((request, response) -> {
            response.setContentType("text/plain;charset=UTF-8");
            if (request.getContentType().startsWith("application/json")) {
                response.getWriter()
                        .print("json=" + new String(request.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                                + " length=" + request.getContentLength());
            } else {
                response.getWriter()
                        .print("amount=" + request.getParameter("amount") + " note=" + request.getParameter("note")
                                + " source=" + request.getParameter("source") + " values="
                                + request.getParameterValues("tag").length);
            }
        });

        HttpResponse<byte[]> json = Call.post(server, "/v1/charges")
                .key(newKey())
                .apiKey("sk_a")
                .json("{\"amount\":7}")
                .send();
        HttpResponse<byte[]> chunkedJson = Call.post(server, "/v1/charges")
                .key(newKey())
                .apiKey("sk_a")
                .header("Content-Type", "application/json")
                .chunked("{\"amount\":8}".getBytes(StandardCharsets.UTF_8))
                .send();
        String formKey = newKey();
        HttpResponse<byte[]> form = Call.post(server, "/v1/charges?source=web")
                .key(formKey)
                .apiKey("sk_a")
                .form("amount=250&note=caf%C3%A9+au+lait&tag=a&tag=b")
                .send();
        HttpResponse<byte[]> formReplay = Call.post(server, "/v1/charges?source=web")
                .key(formKey)
                .apiKey("sk_a")
                .form("amount=250&note=caf%C3%A9+au+lait&tag=a&tag=b")
                .send();

        assertThat(Call.text(json)).isEqualTo("json={\"amount\":7} length=12");
        assertThat(Call.text(chunkedJson)).isEqualTo("json={\"amount\":8} length=12");
        assertThat(Call.text(form)).isEqualTo("amount=250 note=café au lait source=web values=2");
        assertThat(replayed(formReplay)).isTrue();
        assertThat(formReplay.body()).isEqualTo(form.body());
        assertThat(app.executions).hasValue(3);
    }

    // ---- routing ----------------------------------------------------------------------------------

    @Test
    void requestsOutsideTheRoutesPassThroughUntouched() throws Exception {
        app.handler((request, response) -> response.getWriter().print("plain " + request.getMethod()));
        String key = newKey();

        HttpResponse<byte[]> get1 =
                Call.request(server, "GET", "/v1/charges").key(key).send();
        HttpResponse<byte[]> get2 =
                Call.request(server, "GET", "/v1/charges").key(key).send();
        HttpResponse<byte[]> other1 =
                Call.post(server, "/v1/customers").key(key).json("{}").send();
        HttpResponse<byte[]> other2 =
                Call.post(server, "/v1/customers").key(key).json("{\"x\":1}").send();
        HttpResponse<byte[]> deeper =
                Call.post(server, "/v1/charges/ch_1").key("\"broken").json("{}").send();

        for (HttpResponse<byte[]> response : List.of(get1, get2, other1, other2, deeper)) {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER))
                    .isEmpty();
            assertThat(replayed(response)).isFalse();
        }
        assertThat(app.executions).hasValue(5);
        assertThat(listener.claims).hasValue(0);
    }

    @Test
    void anOptionalKeyRouteIsUnguardedWithoutAKeyAndGuardedWithOne() throws Exception {
        app.handler((request, response) -> response.setStatus(201));
        String key = newKey();

        Call.post(server, "/v1/optional").json("{}").send();
        Call.post(server, "/v1/optional").json("{}").send();
        HttpResponse<byte[]> keyed1 = Call.post(server, "/v1/optional")
                .key(key)
                .apiKey("sk_b")
                .json("{}")
                .send();
        HttpResponse<byte[]> keyed2 = Call.post(server, "/v1/optional")
                .key(key)
                .apiKey("sk_b")
                .json("{}")
                .send();
        HttpResponse<byte[]> badKey = Call.post(server, "/v1/optional")
                .key("")
                .apiKey("sk_b")
                .json("{}")
                .send();

        assertThat(app.executions).hasValue(3);
        assertThat(replayed(keyed2)).isTrue();
        assertThat(keyed1.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER))
                .isPresent();
        assertProblem(badKey, 400, "idempotency-key-invalid", "idempotency_key_invalid");
    }

    @Test
    void asynchronousHandlersAreRefusedAndTheKeyReleased() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        app.handler((request, response) -> {
            if (calls.incrementAndGet() == 1) {
                request.startAsync();
            }
            response.setStatus(201);
        });
        String key = newKey();

        HttpResponse<byte[]> async = charge(key).send();
        HttpResponse<byte[]> retry = charge(key).send();

        assertThat(async.statusCode()).isEqualTo(500);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(app.executions).hasValue(2);
    }

    // ---- listener ---------------------------------------------------------------------------------

    @Test
    void listenerCountsClaimsReplaysMismatchesAndConflicts() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch entered = new CountDownLatch(1);
        app.handler((request, response) -> {
            if (request.getParameter("hold") != null) {
                entered.countDown();
                release.await(20, TimeUnit.SECONDS);
            }
            response.setStatus(201);
        });
        String key = newKey();
        String held = newKey();

        charge(key).send();
        charge(key).send();
        Call.post(server, "/v1/charges")
                .key(key)
                .apiKey("sk_a")
                .json("{\"amount\":1}")
                .send();
        CompletableFuture<HttpResponse<byte[]>> slow = Call.post(server, "/v1/charges?hold=1")
                .key(held)
                .apiKey("sk_a")
                .json("{}")
                .sendAsync();
        assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();
        HttpResponse<byte[]> conflict = Call.post(server, "/v1/charges?hold=1")
                .key(held)
                .apiKey("sk_a")
                .json("{}")
                .send();
        release.countDown();
        assertThat(slow.join().statusCode()).isEqualTo(201);

        assertThat(conflict.statusCode()).isEqualTo(409);
        assertThat(listener.claims).hasValue(2);
        assertThat(listener.replays).hasValue(1);
        assertThat(listener.mismatches).hasValue(1);
        assertThat(listener.conflicts).hasValue(1);
        assertThat(listener.recorded).hasValue(2);
    }
}
