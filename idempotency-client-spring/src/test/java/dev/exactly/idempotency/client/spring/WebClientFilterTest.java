package dev.exactly.idempotency.client.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.client.IdempotencyKeyReusedException;
import dev.exactly.idempotency.client.IdempotencyKeys;
import dev.exactly.idempotency.client.RetriesExhaustedException;
import dev.exactly.idempotency.client.RetryPolicy;
import dev.exactly.testing.ScriptedHttpServer;
import dev.exactly.testing.ScriptedHttpServer.Received;
import dev.exactly.testing.ScriptedHttpServer.Reply;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** The WebClient filter against a real HTTP server that records what it received. */
class WebClientFilterTest {
    private static final String KEY = IdempotencyKeys.derive("checkout", "user-42", "order-1001");
    private static final String BODY = "{\"amount\":4999,\"currency\":\"usd\"}";
    private static final Duration BLOCK = Duration.ofSeconds(30);

    private final ScriptedHttpServer server = ScriptedHttpServer.start();
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<Duration> pauses = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        server.close();
        http.close();
    }

    /** Records each pause and runs the task at once (on another thread), instead of waiting. */
    private final Scheduler noWaiting = new Scheduler() {
        private final Scheduler now = Schedulers.boundedElastic();

        @Override
        public Disposable schedule(Runnable task) {
            return now.schedule(task);
        }

        @Override
        public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
            pauses.add(Duration.ofNanos(unit.toNanos(delay)));
            return now.schedule(task);
        }

        @Override
        public Worker createWorker() {
            Worker worker = now.createWorker();
            return new Worker() {
                @Override
                public Disposable schedule(Runnable task) {
                    return worker.schedule(task);
                }

                @Override
                public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
                    pauses.add(Duration.ofNanos(unit.toNanos(delay)));
                    return worker.schedule(task);
                }

                @Override
                public void dispose() {
                    worker.dispose();
                }
            };
        }

        @Override
        public void dispose() {
            // shared
        }
    };

    private WebClient client(RetryPolicy policy, String baseUrl) {
        return WebClient.builder()
                .baseUrl(baseUrl)
                .clientConnector(new JdkClientHttpConnector(http))
                .filter(IdempotencyRetryFilter.builder()
                        .policy(policy)
                        .scheduler(noWaiting)
                        .build())
                .build();
    }

    private WebClient client(RetryPolicy policy) {
        return client(policy, server.uri("").toString());
    }

    private ResponseEntity<String> charge(WebClient client) {
        return client.post()
                .uri("/v1/charges")
                .header("Idempotency-Key", KEY)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(BODY)
                .retrieve()
                .toEntity(String.class)
                .block(BLOCK);
    }

    @Test
    void a409WithRetryAfterIsRetriedWithTheSameKeyAndBytes() {
        server.reply(
                Reply.json(409, "{}").header("Retry-After", "2"),
                Reply.status(503),
                Reply.json(201, "{\"id\":\"ch_1\"}"));

        ResponseEntity<String> answer = charge(client(RetryPolicy.ofDefaults()));

        assertThat(answer.getStatusCode().value()).isEqualTo(201);
        assertThat(answer.getBody()).isEqualTo("{\"id\":\"ch_1\"}");
        assertThat(pauses).hasSize(2);
        assertThat(pauses.getFirst()).isEqualTo(Duration.ofSeconds(2));
        assertThat(pauses.get(1)).isBetween(Duration.ZERO, Duration.ofSeconds(1));
        assertSameKeyAndBytes(3, BODY);
    }

    @Test
    void theFirstAttemptsBytesAreReplayedNotSerialisedAgain() {
        AtomicInteger serialised = new AtomicInteger();
        server.reply(Reply.drop(), Reply.json(201, "{}"));

        ResponseEntity<String> answer = client(RetryPolicy.ofDefaults())
                .post()
                .uri("/v1/charges")
                .header("Idempotency-Key", KEY)
                .contentType(MediaType.APPLICATION_JSON)
                .body(BodyInserters.fromPublisher(
                        Mono.fromSupplier(() -> "{\"n\":" + serialised.incrementAndGet() + "}"), String.class))
                .retrieve()
                .toEntity(String.class)
                .block(BLOCK);

        assertThat(answer.getStatusCode().value()).isEqualTo(201);
        assertThat(serialised).hasValue(1);
        assertSameKeyAndBytes(2, "{\"n\":1}");
    }

    @Test
    void usedUpAttemptsEndInRetriesExhaustedAndAReusedKeyInItsOwnException() {
        server.reply(Reply.status(503), Reply.status(503));
        assertThatThrownBy(
                        () -> charge(client(RetryPolicy.custom().maxAttempts(2).build())))
                .isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
                    assertThat(e.attempts()).isEqualTo(2);
                    assertThat(e.lastAnswer())
                            .get()
                            .satisfies(a -> assertThat(a.status()).isEqualTo(503));
                });

        server.reply(Reply.json(422, "{\"code\":\"idempotency_key_reused\"}"), Reply.json(201, "{}"));
        assertThatThrownBy(() -> charge(client(RetryPolicy.ofDefaults())))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(server.requestCount()).isEqualTo(3);
    }

    @Test
    void otherAnswersPassOnAsTheyCame() {
        String validation = "{\"type\":\"https://exactly.dev/problems/validation\"}";
        server.reply(Reply.json(422, validation), Reply.json(404, "{}"));
        WebClient client = client(RetryPolicy.ofDefaults());

        assertThatThrownBy(() -> charge(client)).isInstanceOfSatisfying(WebClientResponseException.class, e -> {
            assertThat(e.getStatusCode().value()).isEqualTo(422);
            assertThat(e.getResponseBodyAsString()).isEqualTo(validation);
        });
        assertThatThrownBy(() -> charge(client)).isInstanceOf(WebClientResponseException.NotFound.class);
        assertThat(server.requestCount()).isEqualTo(2);
        assertThat(pauses).isEmpty();
    }

    @Test
    void connectionErrorsAndTimeoutsAreRetried() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        assertThatThrownBy(
                        () -> charge(client(RetryPolicy.custom().maxAttempts(3).build(), "http://127.0.0.1:" + closed)))
                .isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
                    assertThat(e.attempts()).isEqualTo(3);
                    assertThat(e.mayHaveExecuted()).isFalse();
                });

        server.reply(Reply.json(201, "{}").heldFor(Duration.ofSeconds(5)), Reply.json(201, "{\"second\":true}"));
        ResponseEntity<String> answer = charge(client(
                RetryPolicy.custom().attemptTimeout(Duration.ofMillis(300)).build()));
        assertThat(answer.getBody()).isEqualTo("{\"second\":true}");
        assertSameKeyAndBytes(2, BODY);
    }

    @Test
    void aRequestWithoutAKeyGoesOutOnceUntouched() {
        server.reply(Reply.status(503), Reply.json(201, "{}"));

        assertThatThrownBy(() -> client(RetryPolicy.ofDefaults())
                        .post()
                        .uri("/v1/charges")
                        .bodyValue(BODY)
                        .retrieve()
                        .toBodilessEntity()
                        .block(BLOCK))
                .isInstanceOf(WebClientResponseException.ServiceUnavailable.class);
        assertThat(server.requestCount()).isEqualTo(1);
    }

    private void assertSameKeyAndBytes(int requests, String body) {
        List<Received> received = server.received();
        assertThat(received).hasSize(requests).allSatisfy(r -> {
            assertThat(r.header("Idempotency-Key")).isEqualTo(KEY);
            assertThat(r.bodyText()).isEqualTo(body);
        });
    }

    @Test
    void aReplayedConflictIsFinal() {
        server.reply(Reply.json(409, "{\"type\":\"https://exactly.dev/problems/charge-voided\"}")
                .header("Idempotent-Replayed", "true"));
        assertThatThrownBy(() -> charge(client(RetryPolicy.ofDefaults())))
                .isInstanceOfSatisfying(
                        WebClientResponseException.class,
                        e -> assertThat(e.getStatusCode().value()).isEqualTo(409));
        assertThat(server.requestCount()).isEqualTo(1);
        assertThat(pauses).isEmpty();
    }

    @Test
    void aLaterAttemptsFailureIsDecidedOnceByThatAttempt() {
        List<String> events = new CopyOnWriteArrayList<>();
        server.reply(Reply.status(503).header("Retry-After", "0"), Reply.drop(), Reply.json(201, "{}"));
        WebClient client = WebClient.builder()
                .baseUrl(server.uri("").toString())
                .clientConnector(new JdkClientHttpConnector(http))
                .filter(IdempotencyRetryFilter.builder()
                        .policy(RetryPolicy.custom().maxAttempts(2).build())
                        .scheduler(noWaiting)
                        .listener(new dev.exactly.idempotency.client.IdempotentClientListener() {
                            @Override
                            public void attemptStarted(Attempt attempt) {
                                events.add("start " + attempt.number());
                            }

                            @Override
                            public void attemptFailed(Attempt attempt, java.io.IOException error) {
                                events.add("failed " + attempt.number());
                            }
                        })
                        .build())
                .build();
        assertThatThrownBy(() -> charge(client)).isInstanceOf(RetriesExhaustedException.class);
        assertThat(events).containsExactly("start 1", "start 2", "failed 2");
        assertThat(server.requestCount())
                .as("no third request after the give-up")
                .isEqualTo(2);
    }
}
