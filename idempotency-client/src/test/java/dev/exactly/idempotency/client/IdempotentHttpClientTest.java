package dev.exactly.idempotency.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.testing.ScriptedHttpServer;
import dev.exactly.testing.ScriptedHttpServer.Received;
import dev.exactly.testing.ScriptedHttpServer.Reply;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every retry rule against a real HTTP server that records what it received. The pauses go through a
 * recording sleeper on a manual clock, so nothing sleeps for real except where a real timeout is the
 * point.
 */
class IdempotentHttpClientTest {
    private static final byte[] BODY =
            "{\"amount\":4999,\"currency\":\"usd\",\"note\":\"caf\u00e9 \u2615\"}".getBytes(StandardCharsets.UTF_8);
    private static final String KEY = IdempotencyKeys.derive("checkout", "user-42", "order-1001");
    private static final String REUSED = """
            {"type":"https://exactly.dev/problems/idempotency-key-reused","title":"Idempotency-Key reused","status":422,\
            "detail":"this Idempotency-Key was already used with a different request","code":"idempotency_key_reused"}""";

    private final ScriptedHttpServer server = ScriptedHttpServer.start();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final ManualClock clock = new ManualClock();
    private final List<String> events = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        server.close();
        http.close();
    }

    private IdempotentHttpClient client(RetryPolicy policy) {
        return IdempotentHttpClient.builder(http)
                .policy(policy)
                .clock(clock)
                .sleeper(clock)
                .random(new Random(7))
                .listener(new IdempotentClientListener() {
                    @Override
                    public void attemptStarted(Attempt a) {
                        events.add("start " + a.number() + " " + a.target().getPort());
                    }

                    @Override
                    public void attemptAnswered(Attempt a, int status, HttpHeaders headers, byte[] body) {
                        events.add("answer " + a.number() + " " + status);
                    }

                    @Override
                    public void attemptFailed(Attempt a, IOException error) {
                        events.add(
                                "failed " + a.number() + " " + error.getClass().getSimpleName());
                    }

                    @Override
                    public void retryScheduled(Attempt a, Duration delay, boolean retryAfter) {
                        events.add("retry after " + delay.toMillis() + (retryAfter ? " asked" : " backoff"));
                    }
                })
                .build();
    }

    private IdempotentHttpClient client() {
        return client(RetryPolicy.ofDefaults());
    }

    private IdempotentRequest request() {
        return IdempotentRequest.postJson(server.uri("/v1/charges"), BODY);
    }

    @Test
    void a409InFlightWithRetryAfterSecondsIsRetriedAfterThatPauseWithTheSameKeyAndBytes() throws Exception {
        server.reply(
                Reply.json(409, "{\"code\":\"idempotency_key_in_use\"}").header("Retry-After", "2"),
                Reply.json(201, "{\"id\":\"ch_1\"}").header("Idempotent-Replayed", "true"));

        IdempotentResponse answer = client().send(request(), KEY);

        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.bodyText()).isEqualTo("{\"id\":\"ch_1\"}");
        assertThat(answer.attempts()).isEqualTo(2);
        assertThat(answer.replayed()).isTrue();
        assertThat(answer.key()).isEqualTo(KEY);
        assertThat(clock.pauses()).containsExactly(Duration.ofSeconds(2));
        assertSameKeyAndBytes(2);
        assertThat(events)
                .containsExactly(
                        "start 1 " + server.port(),
                        "answer 1 409",
                        "retry after 2000 asked",
                        "start 2 " + server.port(),
                        "answer 2 201");
    }

    @Test
    void a429WithRetryAfterAsAnHttpDateWaitsUntilThatDate() throws Exception {
        String inThreeSeconds = DateTimeFormatter.RFC_1123_DATE_TIME.format(
                clock.instant().plusSeconds(3).atOffset(ZoneOffset.UTC));
        server.reply(Reply.status(429).header("Retry-After", inThreeSeconds), Reply.json(200, "{}"));

        IdempotentResponse answer = client().send(request(), KEY);

        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.replayed()).isFalse();
        assertThat(clock.pauses()).containsExactly(Duration.ofSeconds(3));
        assertSameKeyAndBytes(2);
    }

    @Test
    void theSeedsReplayHeaderMarksAReplayToo() throws Exception {
        server.reply(Reply.json(201, "{}").header("X-Idempotent-Replay", "true"), Reply.json(201, "{}"));

        assertThat(client().send(request(), KEY).replayed()).isTrue();
        assertThat(client().send(request(), KEY).replayed()).isFalse();
    }

    @Test
    void a503WithRetryAfterLongerThanTheCapStillWinsWithinTheDeadline() throws Exception {
        server.reply(Reply.status(503).header("Retry-After", "12"), Reply.json(201, "{}"));

        IdempotentResponse answer = client().send(request(), KEY);

        assertThat(answer.status()).isEqualTo(201);
        assertThat(clock.pauses()).as("Retry-After wins over the 5 s cap").containsExactly(Duration.ofSeconds(12));
    }

    @Test
    void aRetryAfterThatEndsPastTheDeadlineEndsTheRetries() {
        server.reply(Reply.status(503).header("Retry-After", "31"));

        assertThatThrownBy(() -> client().send(request(), KEY))
                .isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
                    assertThat(e.reason()).isEqualTo(RetryDecision.GiveUpReason.RETRY_AFTER_BEYOND_DEADLINE);
                    assertThat(e.attempts()).isEqualTo(1);
                    assertThat(e.lastAnswer())
                            .get()
                            .extracting(IdempotentResponse::status)
                            .isEqualTo(503);
                    assertThat(e.mayHaveExecuted()).isTrue();
                });
        assertThat(clock.pauses()).isEmpty();
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(ints = {409, 429, 502, 503, 504})
    void retryableStatusesWithoutRetryAfterBackOffWithFullJitterUnderTheCeiling(int status) throws Exception {
        server.reply(Reply.status(status), Reply.status(status), Reply.status(status), Reply.json(201, "{}"));

        IdempotentResponse answer = client().send(request(), KEY);

        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.attempts()).isEqualTo(4);
        List<Duration> pauses = clock.pauses();
        assertThat(pauses).hasSize(3);
        Backoff backoff = RetryPolicy.ofDefaults().backoff();
        for (int retry = 1; retry <= 3; retry++) {
            assertThat(pauses.get(retry - 1)).isBetween(Duration.ZERO, backoff.ceiling(retry));
        }
        assertSameKeyAndBytes(4);
    }

    @Test
    void connectionRefusedIsRetriedAndReportedAsNeverExecutedWhenItNeverConnects() throws Exception {
        URI closed = URI.create("http://127.0.0.1:" + closedPort() + "/v1/charges");
        IdempotentRequest nowhere = IdempotentRequest.postJson(closed, BODY);

        assertThatThrownBy(() ->
                        client(RetryPolicy.custom().maxAttempts(3).build()).send(nowhere, KEY))
                .isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
                    assertThat(e.reason()).isEqualTo(RetryDecision.GiveUpReason.ATTEMPTS);
                    assertThat(e.attempts()).isEqualTo(3);
                    assertThat(e.mayHaveExecuted()).isFalse();
                    assertThat(e.lastFailure()).isPresent();
                    assertThat(e.lastAnswer()).isEmpty();
                    assertThat(e.getMessage()).contains("same Idempotency-Key").doesNotContain("new key");
                });
        assertThat(clock.pauses()).hasSize(2);
        assertThat(events).filteredOn(e -> e.startsWith("failed")).hasSize(3);
    }

    @Test
    void aRefusedTargetIsFollowedByTheNextTargetWithTheSameKeyAndBytes() throws Exception {
        URI closed = URI.create("http://127.0.0.1:" + closedPort() + "/v1/charges");
        IdempotentRequest twoInstances = IdempotentRequest.builder("POST", closed)
                .alsoTo(server.uri("/v1/charges"))
                .header("Content-Type", "application/json")
                .body(BODY)
                .build();
        server.reply(Reply.json(201, "{}"));

        IdempotentResponse answer = client().send(twoInstances, KEY);

        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.attempts()).isEqualTo(2);
        assertThat(answer.uri()).isEqualTo(server.uri("/v1/charges"));
        assertSameKeyAndBytes(1);
    }

    @Test
    void aTimeoutIsRetriedAndTheRetryCarriesTheSameKeyAndBytes() throws Exception {
        server.reply(Reply.json(201, "{\"late\":true}").heldFor(Duration.ofSeconds(5)), Reply.json(201, "{}"));
        RetryPolicy impatient =
                RetryPolicy.custom().attemptTimeout(Duration.ofMillis(300)).build();

        IdempotentResponse answer = client(impatient).send(request(), KEY);

        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.attempts()).isEqualTo(2);
        assertThat(events).contains("failed 1 " + HttpTimeoutException.class.getSimpleName());
        assertSameKeyAndBytes(2);
    }

    @Test
    void aConnectionDroppedAfterTheRequestIsRetriedAndCountsAsMaybeExecuted() throws Exception {
        server.reply(Reply.drop(), Reply.drop());

        assertThatThrownBy(() ->
                        client(RetryPolicy.custom().maxAttempts(2).build()).send(request(), KEY))
                .isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
                    assertThat(e.mayHaveExecuted())
                            .as("the server read the request")
                            .isTrue();
                    assertThat(e.lastFailure()).isPresent();
                });
        assertSameKeyAndBytes(2);
    }

    @ParameterizedTest
    @ValueSource(ints = {400, 401, 402, 403, 404, 413, 500, 501})
    void otherStatusesAreFinalAndNotRetried(int status) throws Exception {
        server.reply(Reply.json(status, "{\"code\":\"x\"}").header("Retry-After", "1"));

        IdempotentResponse answer = client().send(request(), KEY);

        assertThat(answer.status()).isEqualTo(status);
        assertThat(answer.attempts()).isEqualTo(1);
        assertThat(clock.pauses()).isEmpty();
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @Test
    void a422ValidationErrorIsAFinalAnswerNotAReusedKey() throws Exception {
        server.reply(
                Reply.json(422, "{\"type\":\"https://exactly.dev/problems/validation\",\"code\":\"invalid_request\"}"));

        IdempotentResponse answer = client().send(request(), KEY);

        assertThat(answer.status()).isEqualTo(422);
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @Test
    void a422KeyReusedIsItsOwnExceptionAndNeverRetried() {
        server.reply(Reply.json(422, REUSED), Reply.json(201, "{}"));

        assertThatThrownBy(() -> client().send(request(), KEY))
                .isInstanceOfSatisfying(IdempotencyKeyReusedException.class, e -> {
                    assertThat(e.key()).isEqualTo(KEY);
                    assertThat(e.answer().status()).isEqualTo(422);
                    assertThat(e.answer().attempts()).isEqualTo(1);
                    assertThat(e.getMessage()).contains("already used with a different request");
                });
        assertThat(server.requestCount()).isEqualTo(1);
        assertThat(clock.pauses()).isEmpty();
    }

    @Test
    void theProcessorsReusedCodeIsRecognisedToo() {
        server.reply(
                Reply.json(422, "{\"error\":{\"code\":\"x\"},\"code\":\"idempotency_key_reused\",\"message\":\"no\"}"));

        assertThatThrownBy(() -> client().send(request(), KEY)).isInstanceOf(IdempotencyKeyReusedException.class);
    }

    @Test
    void attemptsBoundTheRetries() {
        for (int i = 0; i < 10; i++) {
            server.reply(Reply.status(503));
        }

        assertThatThrownBy(() ->
                        client(RetryPolicy.custom().maxAttempts(4).build()).send(request(), KEY))
                .isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
                    assertThat(e.reason()).isEqualTo(RetryDecision.GiveUpReason.ATTEMPTS);
                    assertThat(e.attempts()).isEqualTo(4);
                    assertThat(e.lastAnswer())
                            .get()
                            .extracting(IdempotentResponse::status)
                            .isEqualTo(503);
                    assertThat(e.getMessage()).contains("may have been executed", "same Idempotency-Key");
                });
        assertSameKeyAndBytes(4);
    }

    @Test
    void theDeadlineBoundsTheRetries() {
        for (int i = 0; i < 200; i++) {
            server.reply(Reply.status(503));
        }
        RetryPolicy policy = RetryPolicy.custom()
                .maxAttempts(100)
                .initialDelay(Duration.ofMillis(400))
                .maxDelay(Duration.ofSeconds(1))
                .deadline(Duration.ofSeconds(4))
                .build();

        assertThatThrownBy(() -> client(policy).send(request(), KEY))
                .isInstanceOfSatisfying(
                        RetriesExhaustedException.class,
                        e -> assertThat(e.reason()).isEqualTo(RetryDecision.GiveUpReason.DEADLINE));
        Duration slept = clock.pauses().stream().reduce(Duration.ZERO, Duration::plus);
        assertThat(slept).isLessThan(Duration.ofSeconds(4));
        assertThat(server.requestCount()).isEqualTo(clock.pauses().size() + 1).isGreaterThan(3);
    }

    @Test
    void anInvalidKeyIsRefusedBeforeAnythingIsSent() {
        assertThatThrownBy(() -> client().send(request(), "")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client().send(request(), "k".repeat(256)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client().send(request(), "caf\u00e9")).isInstanceOf(IllegalArgumentException.class);
        assertThat(server.requestCount()).isZero();
    }

    @Test
    void aListenerThatThrowsDoesNotBreakTheRequest() throws Exception {
        IdempotentHttpClient c = IdempotentHttpClient.builder(http)
                .clock(clock)
                .sleeper(clock)
                .listener(new IdempotentClientListener() {
                    @Override
                    public void attemptStarted(Attempt attempt) {
                        throw new IllegalStateException("boom");
                    }
                })
                .build();
        server.reply(Reply.status(503), Reply.json(201, "{}"));

        assertThat(c.send(request(), KEY).status()).isEqualTo(201);
    }

    /** Every request the server received carried the same key and exactly the same body bytes. */
    private void assertSameKeyAndBytes(int expectedRequests) {
        List<Received> received = server.received();
        assertThat(received).hasSize(expectedRequests);
        for (Received r : received) {
            assertThat(r.method()).isEqualTo("POST");
            assertThat(r.path()).isEqualTo("/v1/charges");
            assertThat(r.header("Idempotency-Key")).isEqualTo(KEY);
            assertThat(r.header("Content-Type")).isEqualTo("application/json");
            assertThat(r.body()).isEqualTo(BODY);
        }
    }

    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void aReplayedAnswerIsFinalWhateverItsStatus() throws Exception {
        String voided = "{\"type\":\"https://exactly.dev/problems/charge-voided\",\"status\":409}";
        server.reply(
                Reply.json(409, voided).header("Idempotent-Replayed", "true"),
                Reply.json(502, "{}").header("Idempotent-Replayed", "true"));
        IdempotentResponse conflict = client().send(request(), KEY);
        IdempotentResponse recordedServerError = client().send(request(), KEY);
        assertThat(conflict.status()).isEqualTo(409);
        assertThat(conflict.replayed()).isTrue();
        assertThat(recordedServerError.status()).isEqualTo(502);
        assertThat(server.requestCount())
                .as("a recorded outcome is not asked for again")
                .isEqualTo(2);
    }

    @Test
    void anAnswerWhoseBodyStallsEndsWithTheAttemptNotPastTheDeadline() throws Exception {
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        try (ServerSocket listening = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> {
                while (!listening.isClosed()) {
                    try {
                        java.net.Socket socket = listening.accept();
                        Thread.ofVirtual().start(() -> {
                            try (socket) {
                                socket.getInputStream().read(new byte[8192]);
                                socket.getOutputStream()
                                        .write(("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
                                                        + "Content-Length: 100\r\n\r\n{\"id\":")
                                                .getBytes(StandardCharsets.US_ASCII));
                                socket.getOutputStream().flush();
                                done.await(); // the head and six bytes, then nothing
                            } catch (IOException | InterruptedException e) {
                                // the client gave up
                            }
                        });
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
            RetryPolicy policy = RetryPolicy.custom()
                    .attemptTimeout(Duration.ofMillis(300))
                    .deadline(Duration.ofSeconds(1))
                    .maxAttempts(2)
                    .build();
            IdempotentHttpClient client = IdempotentHttpClient.builder(http)
                    .policy(policy)
                    .sleeper(d -> {})
                    .build();
            URI target = URI.create("http://127.0.0.1:" + listening.getLocalPort() + "/v1/charges");
            long started = System.nanoTime();
            try {
                assertThatThrownBy(() -> client.send(IdempotentRequest.postJson(target, BODY), KEY))
                        .isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
                            assertThat(e.mayHaveExecuted()).isTrue();
                            assertThat(e.lastFailure()).containsInstanceOf(HttpTimeoutException.class);
                        });
            } finally {
                done.countDown();
            }
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
        }
    }
}
