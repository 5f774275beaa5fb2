package dev.exactly.idempotency.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.testing.ScriptedHttpServer;
import dev.exactly.testing.ScriptedHttpServer.Reply;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An answer's body is kept up to the client's limit and no further. Before, every body was read whole into
 * memory: a server (or a proxy in between) that answered with gigabytes took the caller's heap with it.
 */
class LargeAnswerTest {
    private static final byte[] BODY = "{\"amount\":100}".getBytes(StandardCharsets.UTF_8);
    private static final String KEY = "large-answer-key";

    private final ScriptedHttpServer scripted = ScriptedHttpServer.start();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final ManualClock clock = new ManualClock();
    private final List<String> events = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        scripted.close();
        http.close();
    }

    private IdempotentHttpClient client(int maxAnswerBytes) {
        return IdempotentHttpClient.builder(http)
                .clock(clock)
                .sleeper(clock)
                .random(new Random(7))
                .maxAnswerBytes(maxAnswerBytes)
                .listener(new IdempotentClientListener() {
                    @Override
                    public void attemptAnswered(Attempt a, int status, HttpHeaders headers, byte[] body) {
                        events.add("answer " + a.number() + " " + status + " " + body.length);
                    }

                    @Override
                    public void attemptFailed(Attempt a, IOException error) {
                        events.add(
                                "failed " + a.number() + " " + error.getClass().getSimpleName());
                    }
                })
                .build();
    }

    /**
     * A server on loopback that answers every request with {@code head}, then (with {@code stream}) body bytes
     * in 64 KiB writes until the client hangs up or 1 GiB went out; counts the bytes written.
     */
    private record Streaming(ServerSocket socket, AtomicLong written, CountDownLatch hungUp) implements AutoCloseable {
        static Streaming start(String head, boolean stream) throws IOException {
            ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            AtomicLong written = new AtomicLong();
            CountDownLatch hungUp = new CountDownLatch(1);
            Thread.ofVirtual().start(() -> {
                while (!socket.isClosed()) {
                    Socket client;
                    try {
                        client = socket.accept();
                    } catch (IOException closed) {
                        return;
                    }
                    Thread.ofVirtual().start(() -> {
                        try (client) {
                            client.getInputStream().read(new byte[8192]);
                            OutputStream out = client.getOutputStream();
                            out.write(head.getBytes(StandardCharsets.US_ASCII));
                            out.flush();
                            byte[] chunk = new byte[64 * 1024];
                            java.util.Arrays.fill(chunk, (byte) 'x');
                            for (int i = 0; i < 16_384; i++) {
                                if (!stream) {
                                    // the head only, the connection held open until the client or the test ends it
                                    client.getInputStream().read();
                                    return;
                                }
                                out.write(chunk);
                                written.addAndGet(chunk.length);
                            }
                        } catch (IOException e) {
                            hungUp.countDown();
                        }
                    });
                }
            });
            return new Streaming(socket, written, hungUp);
        }

        URI uri() {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/v1/charges");
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    @Test
    void aFinalAnswerWhoseBodyGrowsPastTheLimitIsRefusedAndNotReadToItsEnd() throws Exception {
        try (Streaming server = Streaming.start(
                "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n", true)) {
            IdempotentHttpClient client = client(1024 * 1024);
            assertThatThrownBy(() -> client.send(IdempotentRequest.postJson(server.uri(), BODY), KEY))
                    .isInstanceOfSatisfying(AnswerTooLargeException.class, e -> {
                        assertThat(e.status()).isEqualTo(201);
                        assertThat(e.limit()).isEqualTo(1024 * 1024);
                        assertThat(e.attempts()).isEqualTo(1);
                        assertThat(e.key()).isEqualTo(KEY);
                        assertThat(e.headers().firstValue("Content-Type")).contains("application/json");
                        assertThat(e.getMessage()).contains("201", "1048576", "maxAnswerBytes", "same answer");
                    });
            assertThat(server.hungUp().await(30, TimeUnit.SECONDS))
                    .as("the client closed the connection")
                    .isTrue();
            assertThat(server.written().get())
                    .as("far less than the gigabyte on offer went out")
                    .isLessThan(256L * 1024 * 1024);
            assertThat(events).containsExactly("failed 1 TooLarge");
        }
    }

    @Test
    void aDeclaredLengthOverTheLimitIsRefusedBeforeAnyOfTheBody() throws Exception {
        try (Streaming server = Streaming.start(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n", false)) {
            // the server sends the head and nothing more: the client decides from the head, within the attempt
            IdempotentHttpClient client = client(1024 * 1024);
            long started = System.nanoTime();
            assertThatThrownBy(() -> client.send(IdempotentRequest.postJson(server.uri(), BODY), KEY))
                    .isInstanceOfSatisfying(
                            AnswerTooLargeException.class,
                            e -> assertThat(e.status()).isEqualTo(200));
            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .as("not at the attempt's timeout (10 s)")
                    .isLessThan(Duration.ofSeconds(5));
        }
    }

    @Test
    void aRetryableStatusWithAHugeBodyIsRetriedAsItsStatusSays() throws Exception {
        scripted.reply(
                Reply.json(503, "{\"page\":\"" + "x".repeat(200_000) + "\"}").header("Retry-After", "1"),
                Reply.json(201, "{\"id\":\"ch_1\"}"));
        IdempotentResponse answer =
                client(64 * 1024).send(IdempotentRequest.postJson(scripted.uri("/v1/charges"), BODY), KEY);
        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.attempts()).isEqualTo(2);
        assertThat(clock.pauses()).containsExactly(Duration.ofSeconds(1));
        assertThat(events).containsExactly("failed 1 TooLarge", "answer 2 201 13");
    }

    @Test
    void aBodyOfExactlyTheLimitIsKept() throws Exception {
        String json = "{\"id\":\"ch_1\"}";
        scripted.reply(Reply.json(201, json));
        IdempotentResponse answer =
                client(json.length()).send(IdempotentRequest.postJson(scripted.uri("/v1/charges"), BODY), KEY);
        assertThat(answer.bodyText()).isEqualTo(json);

        scripted.reply(Reply.json(201, json));
        assertThatThrownBy(() -> client(json.length() - 1)
                        .send(IdempotentRequest.postJson(scripted.uri("/v1/charges"), BODY), KEY))
                .isInstanceOf(AnswerTooLargeException.class);
    }

    @Test
    void theLimitMustBePositive() {
        assertThatThrownBy(() -> IdempotentHttpClient.builder(http).maxAnswerBytes(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxAnswerBytes");
        assertThat(IdempotentHttpClient.Builder.DEFAULT_MAX_ANSWER_BYTES).isEqualTo(16 * 1024 * 1024);
    }
}
