package dev.exactly.psp.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The blocking client against a scripted HTTP/1.1 server: what it sends, how it reads fixed-length,
 * chunked and close-delimited answers, when it keeps a connection and when it opens a new one, and the
 * JDK client's failures.
 */
class PlainHttpClientTest {
    private final PlainHttpClient client = new PlainHttpClient(Duration.ofSeconds(2));
    private ScriptedServer server;

    @AfterEach
    void close() throws IOException {
        client.close();
        if (server != null) {
            server.close();
        }
    }

    private static HttpRequest post(URI uri, String body) {
        return HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(5))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", "k1")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    @Test
    void sendsTheRequestWholeAndKeepsTheConnection() throws Exception {
        server = new ScriptedServer(
                request -> "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
                        + "X-Two: a\r\nX-Two: b\r\n\r\n{\"ok\":true}");
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> answer = client.send(
                    post(server.uri("/v1/charges?x=1"), "{\"amount\":" + i + "}"),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(answer.body()).isEqualTo("{\"ok\":true}");
            assertThat(answer.headers().allValues("x-two")).containsExactly("a", "b");
            assertThat(answer.uri()).isEqualTo(server.uri("/v1/charges?x=1"));
        }
        List<String> requests = server.requests();
        assertThat(requests).hasSize(3);
        assertThat(requests.getFirst())
                .startsWith("POST /v1/charges?x=1 HTTP/1.1\r\n")
                .contains(
                        "\r\nHost: 127.0.0.1:" + server.port() + "\r\n",
                        "\r\nContent-Length: 12\r\n",
                        "\r\nIdempotency-Key: k1\r\n",
                        "\r\nContent-Type: application/json\r\n")
                .endsWith("\r\n\r\n{\"amount\":0}");
        assertThat(server.connections())
                .as("one connection carries every request")
                .isEqualTo(1);
    }

    @Test
    void readsChunkedAndCloseDelimitedAnswers() throws Exception {
        server = new ScriptedServer(request -> request.startsWith("GET /chunked")
                ? "HTTP/1.1 402 Payment Required\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3;x=y\r\n:1}\r\n0\r\n\r\n"
                : "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\neverything until the end");
        HttpResponse<String> chunked = client.send(
                HttpRequest.newBuilder(server.uri("/chunked")).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(chunked.statusCode()).isEqualTo(402);
        assertThat(chunked.body()).isEqualTo("{\"a\":1}");
        assertThat(server.requests().getFirst()).doesNotContain("Content-Length");
        HttpResponse<byte[]> toEnd = client.send(
                HttpRequest.newBuilder(server.uri("/end")).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(new String(toEnd.body(), StandardCharsets.UTF_8)).isEqualTo("everything until the end");
        // the server closed the connection after that answer: the next request opens another
        assertThat(client.send(
                                HttpRequest.newBuilder(server.uri("/chunked"))
                                        .GET()
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body())
                .isEqualTo("{\"a\":1}");
        assertThat(server.connections()).isEqualTo(2);
    }

    @Test
    void aConnectionTheServerClosedWhileIdleIsNotUsed() throws Exception {
        server = new ScriptedServer(request -> "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        server.closeAfterEachAnswer = true;
        for (int i = 0; i < 3; i++) {
            assertThat(client.send(post(server.uri("/v1/charges"), "{}"), HttpResponse.BodyHandlers.ofString())
                            .body())
                    .isEqualTo("ok");
            assertThat(server.closed.poll(5, TimeUnit.SECONDS))
                    .as("the server closed the connection")
                    .isNotNull();
        }
        assertThat(server.connections()).isEqualTo(3);
    }

    @Test
    void failsAsTheJdkClientDoes() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        server = new ScriptedServer(request -> {
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        });
        HttpRequest slow = HttpRequest.newBuilder(server.uri("/slow"))
                .timeout(Duration.ofMillis(300))
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build();
        assertThatThrownBy(() -> client.send(slow, HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(HttpTimeoutException.class);
        release.countDown();

        // the server answers nothing and closes: the connection is lost (the request may have been acted on)
        server.close();
        ScriptedServer silent = new ScriptedServer(request -> null);
        server = silent;
        assertThatThrownBy(
                        () -> client.send(post(silent.uri("/v1/charges"), "{}"), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class)
                .isNotInstanceOf(HttpTimeoutException.class)
                .hasMessageContaining("closed before an answer");

        // a port held by a socket that does not listen (a closed server's port could be taken by another
        // test's server at once): the connection is refused
        try (Socket holder = new Socket()) {
            holder.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            URI refused = URI.create("http://127.0.0.1:" + holder.getLocalPort() + "/x");
            assertThatThrownBy(() -> client.send(post(refused, "{}"), HttpResponse.BodyHandlers.ofString()))
                    .isInstanceOf(ConnectException.class);
        }
    }

    @Test
    void aPooledConnectionClosedAsItIsReusedIsTriedOnceMoreOnlyForARequestWithoutEffects() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        // the second request (on the kept connection) meets a close without an answer, as when the server's
        // idle timeout fires while the client reuses the connection; every other request is answered
        server = new ScriptedServer(
                request -> calls.incrementAndGet() == 2 ? null : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        HttpRequest get = HttpRequest.newBuilder(server.uri("/v1/charges/ch_1"))
                .timeout(Duration.ofSeconds(5))
                .GET()
                .build();
        assertThat(client.send(get, HttpResponse.BodyHandlers.ofString()).body())
                .isEqualTo("ok");
        assertThat(client.send(get, HttpResponse.BodyHandlers.ofString()).body())
                .as("a GET is sent again on a new connection")
                .isEqualTo("ok");
        assertThat(server.requests()).hasSize(3);
        assertThat(server.connections()).isEqualTo(2);

        // a POST may have been acted on (even with a key): its caller learns the connection was lost and
        // decides; nothing is resent here
        calls.set(0);
        assertThat(client.send(post(server.uri("/v1/charges"), "{}"), HttpResponse.BodyHandlers.ofString())
                        .body())
                .isEqualTo("ok");
        assertThatThrownBy(
                        () -> client.send(post(server.uri("/v1/charges"), "{}"), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("closed before an answer");
        assertThat(server.requests()).hasSize(5);
    }

    @Test
    void anAnswerWhoseFramingOrStatusIsAmbiguousFailsTheCallInsteadOfBeingGuessed() throws Exception {
        java.util.Map<String, String> answers = java.util.Map.of(
                "/long-status", "HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok",
                "/negative-status", "HTTP/1.1 -01 X\r\nContent-Length: 2\r\n\r\nok",
                "/folded", "HTTP/1.1 200 OK\r\nX-Note: a\r\n Content-Length: 5\r\nContent-Length: 2\r\n\r\nok",
                "/two-lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nok",
                "/endless-interim",
                        "HTTP/1.1 102 Processing\r\n\r\n".repeat(11) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                "/same-lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok");
        server = new ScriptedServer(request -> answers.get(request.split(" ", 0)[1]));
        server.closeAfterEachAnswer = true;
        for (String path : List.of("/long-status", "/negative-status", "/folded", "/two-lengths", "/endless-interim")) {
            assertThatThrownBy(() -> client.send(post(server.uri(path), "{}"), HttpResponse.BodyHandlers.ofString()))
                    .as(path)
                    .isInstanceOf(IOException.class);
        }
        assertThat(client.send(post(server.uri("/same-lengths"), "{}"), HttpResponse.BodyHandlers.ofString())
                        .body())
                .isEqualTo("ok");
    }

    @Test
    void anAnswerBodyLargerThanTheLimitFailsTheCallWithoutReadingIt() throws Exception {
        int over = PlainHttpClient.MAX_BODY_BYTES + 1;
        server = new ScriptedServer(request -> request.startsWith("GET /length")
                ? "HTTP/1.1 200 OK\r\nContent-Length: " + over + "\r\n\r\n"
                : "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(over) + "\r\n");
        for (String path : List.of("/length", "/chunked")) {
            assertThatThrownBy(() -> client.send(
                            HttpRequest.newBuilder(server.uri(path))
                                    .timeout(Duration.ofSeconds(5))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofString()))
                    .as(path)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("larger than");
        }
    }

    /**
     * A one-thread HTTP/1.1 server answering each request with what the script returns (raw bytes);
     * {@code null}: closes the connection without an answer.
     */
    private static final class ScriptedServer implements AutoCloseable {
        final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final Function<String, String> script;
        final List<String> requests = new ArrayList<>();
        final BlockingQueue<Boolean> closed = new LinkedBlockingQueue<>();
        volatile boolean closeAfterEachAnswer;
        int connections;

        ScriptedServer(Function<String, String> script) throws IOException {
            this.script = script;
            Thread.ofPlatform().daemon().start(this::serve);
        }

        URI uri(String pathAndQuery) {
            return URI.create("http://127.0.0.1:" + port() + pathAndQuery);
        }

        int port() {
            return socket.getLocalPort();
        }

        synchronized List<String> requests() {
            return List.copyOf(requests);
        }

        synchronized int connections() {
            return connections;
        }

        private void serve() {
            while (!socket.isClosed()) {
                try (Socket connection = socket.accept()) {
                    synchronized (this) {
                        connections++;
                    }
                    InputStream in = connection.getInputStream();
                    OutputStream out = connection.getOutputStream();
                    while (true) {
                        String request = readRequest(in);
                        if (request == null) {
                            break;
                        }
                        synchronized (this) {
                            requests.add(request);
                        }
                        String answer = script.apply(request);
                        if (answer == null) {
                            break;
                        }
                        out.write(answer.getBytes(StandardCharsets.ISO_8859_1));
                        out.flush();
                        if (closeAfterEachAnswer || answer.contains("Connection: close")) {
                            break;
                        }
                    }
                } catch (IOException e) {
                    // the next connection
                }
                closed.add(true);
            }
        }

        /** A request's head and its Content-Length body, or null at the end of the connection. */
        private static String readRequest(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                head.write(b);
                String text = head.toString(StandardCharsets.ISO_8859_1);
                if (text.endsWith("\r\n\r\n")) {
                    int length = 0;
                    for (String line : text.split("\r\n", 0)) {
                        if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                            length = Integer.parseInt(line.substring(15).strip());
                        }
                    }
                    return text + new String(in.readNBytes(length), StandardCharsets.ISO_8859_1);
                }
            }
            return null;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
