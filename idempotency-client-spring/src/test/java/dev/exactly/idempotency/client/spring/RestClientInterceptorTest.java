package dev.exactly.idempotency.client.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.client.IdempotencyKeyReusedException;
import dev.exactly.idempotency.client.IdempotencyKeys;
import dev.exactly.idempotency.client.RetriesExhaustedException;
import dev.exactly.idempotency.client.RetryDecision;
import dev.exactly.idempotency.client.RetryPolicy;
import dev.exactly.testing.ScriptedHttpServer;
import dev.exactly.testing.ScriptedHttpServer.Received;
import dev.exactly.testing.ScriptedHttpServer.Reply;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;

/** The RestClient interceptor against a real HTTP server that records what it received. */
class RestClientInterceptorTest {
    private static final String KEY = IdempotencyKeys.derive("checkout", "user-42", "order-1001");
    private static final String BODY = "{\"amount\":4999,\"currency\":\"usd\"}";

    private final ScriptedHttpServer server = ScriptedHttpServer.start();
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<Duration> pauses = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        server.close();
        http.close();
    }

    private RestClient client(RetryPolicy policy, String baseUrl) {
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http);
        factory.setReadTimeout(policy.attemptTimeout());
        return RestClient.builder()
                .baseUrl(baseUrl)
                .requestFactory(factory)
                .requestInterceptor(IdempotencyRetryInterceptor.builder()
                        .policy(policy)
                        .sleeper(pauses::add)
                        .build())
                .build();
    }

    private RestClient client(RetryPolicy policy) {
        return client(policy, server.uri("").toString());
    }

    private ResponseEntity<String> charge(RestClient client) {
        return client.post()
                .uri("/v1/charges")
                .header("Idempotency-Key", KEY)
                .contentType(MediaType.APPLICATION_JSON)
                .body(BODY)
                .retrieve()
                .toEntity(String.class);
    }

    @Test
    void a409WithRetryAfterIsRetriedWithTheSameKeyAndBytes() {
        server.reply(
                Reply.json(409, "{\"code\":\"idempotency_key_in_use\"}").header("Retry-After", "1"),
                Reply.json(201, "{\"id\":\"ch_1\"}").header("Idempotent-Replayed", "true"));

        ResponseEntity<String> answer = charge(client(RetryPolicy.ofDefaults()));

        assertThat(answer.getStatusCode().value()).isEqualTo(201);
        assertThat(answer.getBody()).isEqualTo("{\"id\":\"ch_1\"}");
        assertThat(pauses).containsExactly(Duration.ofSeconds(1));
        assertSameKeyAndBytes(2);
    }

    @Test
    void a503WithAnHttpDateAndBackoffsThenTheAnswer() {
        String soon = DateTimeFormatter.RFC_1123_DATE_TIME.format(
                Instant.now().plusSeconds(4).atOffset(ZoneOffset.UTC));
        server.reply(
                Reply.status(503).header("Retry-After", soon),
                Reply.status(502),
                Reply.status(429),
                Reply.json(201, "{}"));

        assertThat(charge(client(RetryPolicy.ofDefaults())).getStatusCode().value())
                .isEqualTo(201);

        assertThat(pauses).hasSize(3);
        assertThat(pauses.getFirst()).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(4));
        assertThat(pauses.get(1)).isBetween(Duration.ZERO, Duration.ofSeconds(1));
        assertThat(pauses.get(2)).isBetween(Duration.ZERO, Duration.ofSeconds(2));
        assertSameKeyAndBytes(4);
    }

    @Test
    void usedUpAttemptsEndInRetriesExhausted() {
        server.reply(Reply.status(503), Reply.status(503), Reply.status(503), Reply.json(201, "{}"));

        assertThatThrownBy(
                        () -> charge(client(RetryPolicy.custom().maxAttempts(3).build())))
                .isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
                    assertThat(e.attempts()).isEqualTo(3);
                    assertThat(e.reason()).isEqualTo(RetryDecision.GiveUpReason.ATTEMPTS);
                    assertThat(e.lastAnswer())
                            .get()
                            .satisfies(a -> assertThat(a.status()).isEqualTo(503));
                    assertThat(e.key()).isEqualTo(KEY);
                });
        assertSameKeyAndBytes(3);
    }

    @Test
    void aReusedKeyIsItsOwnExceptionAndNotRetried() {
        server.reply(
                Reply.json(422, "{\"type\":\"https://exactly.dev/problems/idempotency-key-reused\"}"),
                Reply.json(201, "{}"));

        assertThatThrownBy(() -> charge(client(RetryPolicy.ofDefaults())))
                .isInstanceOfSatisfying(
                        IdempotencyKeyReusedException.class,
                        e -> assertThat(e.answer().status()).isEqualTo(422));
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @Test
    void otherAnswersReachTheRestClientAsTheyCameAndAreNotRetried() {
        String validation = "{\"type\":\"https://exactly.dev/problems/validation\",\"code\":\"invalid_request\"}";
        server.reply(Reply.json(422, validation), Reply.json(400, "{\"code\":\"bad\"}"), Reply.json(500, "{}"));
        RestClient client = client(RetryPolicy.ofDefaults());

        assertThatThrownBy(() -> charge(client)).isInstanceOfSatisfying(HttpClientErrorException.class, e -> {
            assertThat(e.getStatusCode().value()).isEqualTo(422);
            assertThat(e.getResponseBodyAsString()).isEqualTo(validation);
        });
        assertThatThrownBy(() -> charge(client)).isInstanceOf(HttpClientErrorException.BadRequest.class);
        assertThatThrownBy(() -> charge(client)).isInstanceOf(HttpServerErrorException.InternalServerError.class);
        assertThat(server.requestCount()).isEqualTo(3);
        assertThat(pauses).isEmpty();
    }

    @Test
    void connectionErrorsAreRetried() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        RestClient nowhere = client(RetryPolicy.custom().maxAttempts(3).build(), "http://127.0.0.1:" + closed);
        assertThatThrownBy(() -> charge(nowhere)).isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
            assertThat(e.attempts()).isEqualTo(3);
            assertThat(e.mayHaveExecuted()).isFalse();
        });

        server.reply(Reply.drop(), Reply.json(201, "{}"));
        assertThat(charge(client(RetryPolicy.ofDefaults())).getStatusCode().value())
                .isEqualTo(201);
        assertSameKeyAndBytes(2);
    }

    @Test
    void aTimeoutIsRetried() {
        server.reply(Reply.json(201, "{}").heldFor(Duration.ofSeconds(5)), Reply.json(201, "{\"second\":true}"));

        ResponseEntity<String> answer = charge(client(
                RetryPolicy.custom().attemptTimeout(Duration.ofMillis(300)).build()));

        assertThat(answer.getBody()).isEqualTo("{\"second\":true}");
        assertSameKeyAndBytes(2);
    }

    @Test
    void aRequestWithoutAKeyGoesOutOnceUntouched() {
        server.reply(Reply.status(503), Reply.json(201, "{}"));

        assertThatThrownBy(() -> client(RetryPolicy.ofDefaults())
                        .post()
                        .uri("/v1/charges")
                        .contentType(MediaType.APPLICATION_JSON)
                        .body(BODY)
                        .retrieve()
                        .toBodilessEntity())
                .isInstanceOf(HttpServerErrorException.ServiceUnavailable.class);
        assertThat(server.requestCount()).isEqualTo(1);
        assertThat(server.received().getFirst().header("Idempotency-Key")).isNull();
    }

    private void assertSameKeyAndBytes(int requests) {
        List<Received> received = server.received();
        assertThat(received).hasSize(requests).allSatisfy(r -> {
            assertThat(r.header("Idempotency-Key")).isEqualTo(KEY);
            assertThat(r.bodyText()).isEqualTo(BODY);
        });
    }

    @Test
    void aReplayedConflictIsFinal() {
        server.reply(Reply.json(409, "{\"type\":\"https://exactly.dev/problems/charge-voided\"}")
                .header("Idempotent-Replayed", "true"));
        assertThatThrownBy(() -> charge(client(RetryPolicy.ofDefaults())))
                .isInstanceOfSatisfying(
                        org.springframework.web.client.HttpClientErrorException.Conflict.class,
                        e -> assertThat(e.getResponseBodyAsString()).contains("charge-voided"));
        assertThat(server.requestCount()).isEqualTo(1);
        assertThat(pauses).isEmpty();
    }
}
