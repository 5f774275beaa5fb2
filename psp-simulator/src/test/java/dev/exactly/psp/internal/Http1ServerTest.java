package dev.exactly.psp.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The stand-in's HTTP/1.1 server over raw sockets: keep-alive and pipelining, bodies by length and chunked,
 * 100-continue, what it refuses and how (an answer, then the connection closed), idle and stalled
 * connections, the connection bound, unanswered exchanges and closing.
 */
class Http1ServerTest {
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger handled = new AtomicInteger();
    private Http1Server server;

    @AfterEach
    void close() {
        release.countDown();
        if (server != null) {
            server.close();
        }
    }

    /** Echoes what it read; /drop answers nothing, /skip answers without reading the body, /hold waits. */
    private void handle(Exchange ex) throws IOException {
        handled.incrementAndGet();
        String path = ex.uri().getPath();
        switch (path) {
            case "/drop" -> {
                return;
            }
            case "/boom" -> throw new IllegalStateException("boom");
            case "/hold" -> {
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            default -> {}
        }
        String body = path.equals("/skip") ? "" : new String(ex.body().readAllBytes(), StandardCharsets.UTF_8);
        ex.setHeader("X-Keys", String.join("|", ex.headers("Idempotency-Key")));
        ex.respond(
                200,
                (ex.method() + " " + path + " " + ex.uri().getRawQuery() + " [" + body + "]")
                        .getBytes(StandardCharsets.UTF_8));
    }

    private void start(Duration idle, int maxConnections) throws IOException {
        server = new Http1Server(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                50,
                this::handle,
                (status, code, message) -> ("{\"code\":\"" + code + "\"}").getBytes(StandardCharsets.UTF_8),
                idle,
                maxConnections);
    }

    private void start() throws IOException {
        start(Duration.ofSeconds(30), 64);
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), server.address().getPort());
        s.setSoTimeout(5000);
        return s;
    }

    private static void send(Socket s, String text) throws IOException {
        s.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().flush();
    }

    private record Answer(int status, Map<String, String> headers, String body) {}

    /** Reads one answer (by Content-Length) from the socket. */
    private static Answer read(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("closed before a whole head: " + head);
            }
            head.write(c);
            matched = (c == '\r' && (matched == 0 || matched == 2)) || (c == '\n' && (matched == 1 || matched == 3))
                    ? matched + 1
                    : (c == '\r' ? 1 : 0);
        }
        String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n", 0);
        int status = Integer.parseInt(lines[0].split(" ", 0)[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            headers.put(
                    lines[i].substring(0, colon).toLowerCase(Locale.ROOT),
                    lines[i].substring(colon + 1).trim());
        }
        int length = status == 100 ? 0 : Integer.parseInt(headers.get("content-length"));
        byte[] body = in.readNBytes(length);
        return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    /** True when the server closed the connection (the next read ends) with nothing more sent. */
    private static boolean closedWithoutMore(Socket s) throws IOException {
        try {
            return s.getInputStream().read() < 0;
        } catch (java.net.SocketException reset) {
            return true;
        }
    }

    @Test
    void keepsTheConnectionAndAnswersPipelinedRequestsInOrder() throws Exception {
        start();
        try (Socket s = connect()) {
            send(s, "POST /v1/a?x=1 HTTP/1.1\r\nHost: h\r\nIdempotency-Key: k1\r\nContent-Length: 5\r\n\r\nhello");
            Answer first = read(s);
            assertThat(first.status()).isEqualTo(200);
            assertThat(first.body()).isEqualTo("POST /v1/a x=1 [hello]");
            assertThat(first.headers())
                    .containsEntry("x-keys", "k1")
                    .containsKey("date")
                    .containsEntry("content-type", "application/json")
                    .doesNotContainKey("connection");
            // two requests in one write, the second with two keys
            send(
                    s,
                    "GET /one HTTP/1.1\r\nHost: h\r\n\r\nPOST /two HTTP/1.1\r\nHost: h\r\nIdempotency-Key: a\r\n"
                            + "idempotency-key: b\r\nContent-Length: 3\r\n\r\nxyz");
            assertThat(read(s).body()).isEqualTo("GET /one null []");
            Answer two = read(s);
            assertThat(two.body()).isEqualTo("POST /two null [xyz]");
            assertThat(two.headers()).containsEntry("x-keys", "a|b");
        }
        assertThat(handled).hasValue(3);
    }

    @Test
    // the bytes on the wire, each CRLF spelled out: a text block would end its lines in LF alone
    @SuppressWarnings("StringConcatToTextBlock")
    void readsChunkedBodiesAndSends100ContinueOnlyWhenTheBodyIsRead() throws Exception {
        start();
        try (Socket s = connect()) {
            send(
                    s,
                    "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                            + "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n");
            assertThat(read(s).body()).isEqualTo("POST /c null [abcde]");

            send(s, "POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
            assertThat(read(s).status()).isEqualTo(100);
            send(s, "body");
            assertThat(read(s).body()).isEqualTo("POST /e null [body]");

            // an answer that never read the body: no 100 Continue, and the connection closes after it
            send(s, "POST /skip HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
            Answer skipped = read(s);
            assertThat(skipped.status()).isEqualTo(200);
            assertThat(closedWithoutMore(s)).isTrue();
        }
    }

    @Test
    void aSmallUnreadBodyIsSkippedAndALargeOneClosesTheConnection() throws Exception {
        start();
        try (Socket s = connect()) {
            send(s, "POST /skip HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789");
            assertThat(read(s).body()).isEqualTo("POST /skip null []");
            send(s, "GET /after HTTP/1.1\r\nHost: h\r\n\r\n");
            assertThat(read(s).body()).isEqualTo("GET /after null []");

            int large = Http1Server.MAX_SKIPPED_BODY_BYTES + 1;
            send(s, "POST /skip HTTP/1.1\r\nHost: h\r\nContent-Length: " + large + "\r\n\r\n");
            assertThat(read(s).status()).isEqualTo(200);
            assertThat(closedWithoutMore(s)).isTrue();
        }
    }

    @Test
    void refusesMalformedAndAmbiguousRequestsWithAnAnswerAndClosesTheConnection() throws Exception {
        start();
        Map<String, Integer> refused = new LinkedHashMap<>();
        refused.put("GARBAGE\r\n\r\n", 400);
        refused.put("GET  /two-spaces HTTP/1.1\r\nHost: h\r\n\r\n", 400);
        refused.put("GET /x HTTP/1.1 extra\r\nHost: h\r\n\r\n", 400);
        refused.put("G(T /x HTTP/1.1\r\nHost: h\r\n\r\n", 400);
        refused.put("GET x HTTP/1.1\r\nHost: h\r\n\r\n", 400);
        refused.put("GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n", 400);
        refused.put("GET /x HTTP/2.0\r\nHost: h\r\n\r\n", 505);
        refused.put("GET /x HTTX/1.1\r\nHost: h\r\n\r\n", 400);
        refused.put("GET /x HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", 400);
        refused.put("GET /x HTTP/1.1\r\nBad Name: v\r\n\r\n", 400);
        refused.put("GET /x HTTP/1.1\r\nNoColon\r\n\r\n", 400);
        refused.put("GET /x HTTP/1.1\r\nX: a\rb\r\n\r\n", 400);
        refused.put(
                "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400);
        refused.put("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400);
        refused.put("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: -3\r\n\r\n", 400);
        refused.put("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", 400);
        refused.put("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501);
        refused.put("POST /x HTTP/1.1\r\nHost: h\r\nExpect: something-else\r\nContent-Length: 1\r\n\r\na", 417);
        refused.put("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400);
        refused.put("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", 400);
        refused.put("\r\n\r\n\r\n\r\n\r\nGET /x HTTP/1.1\r\n\r\n", 400);
        for (Map.Entry<String, Integer> e : refused.entrySet()) {
            try (Socket s = connect()) {
                send(s, e.getKey());
                Answer answer = read(s);
                assertThat(answer.status()).as(e.getKey()).isEqualTo(e.getValue());
                assertThat(answer.headers()).as(e.getKey()).containsEntry("connection", "close");
                assertThat(answer.body()).as(e.getKey()).startsWith("{\"code\":");
                assertThat(closedWithoutMore(s)).as(e.getKey()).isTrue();
            }
        }
        assertThat(handled)
                .as("only the bodies that fail while read reach the handler")
                .hasValue(2);
    }

    @Test
    void aHeadOverTheBoundIs431WithoutReadingItAll() throws Exception {
        start();
        try (Socket s = connect()) {
            String big = "X-Big: " + "a".repeat(Http1Server.MAX_HEAD_BYTES) + "\r\n";
            send(s, "GET /x HTTP/1.1\r\nHost: h\r\n" + big);
            Answer answer = read(s);
            assertThat(answer.status()).isEqualTo(431);
            assertThat(answer.body()).isEqualTo("{\"code\":\"header_too_large\"}");
        }
        try (Socket s = connect()) {
            StringBuilder many = new StringBuilder("GET /x HTTP/1.1\r\n");
            for (int i = 0; i <= Http1Server.MAX_HEADER_LINES; i++) {
                many.append("X-").append(i).append(": v\r\n");
            }
            send(s, many.append("\r\n").toString());
            assertThat(read(s).status()).isEqualTo(431);
        }
        assertThat(handled).hasValue(0);
    }

    @Test
    void leadingEmptyLinesAndBareLineFeedsAreAccepted() throws Exception {
        start();
        try (Socket s = connect()) {
            send(s, "\r\nGET /lf?q=1 HTTP/1.1\nHost: h\n\n");
            assertThat(read(s).body()).isEqualTo("GET /lf q=1 []");
        }
    }

    @Test
    void http10ClosesAfterItsAnswerAndHeadGetsNoBody() throws Exception {
        start();
        try (Socket s = connect()) {
            send(s, "GET /old HTTP/1.0\r\n\r\n");
            Answer answer = read(s);
            assertThat(answer.body()).isEqualTo("GET /old null []");
            assertThat(answer.headers()).containsEntry("connection", "close");
            assertThat(closedWithoutMore(s)).isTrue();
        }
        try (Socket s = connect()) {
            send(s, "HEAD /h HTTP/1.1\r\nHost: h\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
            InputStream in = s.getInputStream();
            String all = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            // the HEAD answer's head names the body's length, then the next answer follows at once
            assertThat(all)
                    .startsWith("HTTP/1.1 200 OK\r\n")
                    .contains("Content-Length: 15\r\n")
                    .contains("\r\n\r\nHTTP/1.1 200 OK\r\n")
                    .endsWith("\r\n\r\nGET /next null []")
                    .contains("Connection: close\r\n");
        }
    }

    @Test
    void anUnansweredExchangeOrAFailingHandlerClosesTheConnection() throws Exception {
        start();
        try (Socket s = connect()) {
            send(s, "POST /drop HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi");
            assertThat(closedWithoutMore(s)).isTrue();
        }
        try (Socket s = connect()) {
            send(s, "GET /boom HTTP/1.1\r\nHost: h\r\n\r\n");
            Answer answer = read(s);
            assertThat(answer.status()).isEqualTo(500);
            assertThat(answer.body()).isEqualTo("{\"code\":\"internal_error\"}");
            assertThat(closedWithoutMore(s)).isTrue();
        }
    }

    @Test
    void idleAndStalledConnectionsAreClosedAfterTheIdleTimeout() throws Exception {
        start(Duration.ofMillis(300), 64);
        try (Socket idle = connect();
                Socket stalledHead = connect();
                Socket stalledBody = connect();
                Socket busy = connect()) {
            send(stalledHead, "GET /x HTTP/1.1\r\nHost:");
            send(stalledBody, "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc");
            send(busy, "GET /hold HTTP/1.1\r\nHost: h\r\n\r\n");
            long start = System.nanoTime();
            assertThat(closedWithoutMore(idle)).isTrue();
            assertThat(closedWithoutMore(stalledHead)).isTrue();
            assertThat(closedWithoutMore(stalledBody)).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
            // a handler at work is not idle: its connection waits for it, however long
            await().atMost(Duration.ofSeconds(5)).until(() -> server.connections() == 1);
            busy.setSoTimeout(200);
            try {
                busy.getInputStream().read();
                throw new AssertionError("the held exchange answered early");
            } catch (SocketTimeoutException expected) {
                // still held
            }
            busy.setSoTimeout(5000);
            release.countDown();
            assertThat(read(busy).body()).isEqualTo("GET /hold null []");
        }
    }

    @Test
    void connectionsBeyondTheBoundAre503() throws Exception {
        start(Duration.ofSeconds(30), 2);
        List<Socket> open = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                Socket s = connect();
                open.add(s);
                send(s, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
                assertThat(read(s).status()).isEqualTo(200);
            }
            try (Socket extra = connect()) {
                Answer answer = read(extra);
                assertThat(answer.status()).isEqualTo(503);
                assertThat(answer.body()).isEqualTo("{\"code\":\"too_many_connections\"}");
            }
            open.remove(0).close();
            await().atMost(Duration.ofSeconds(5)).until(() -> server.connections() == 1);
            try (Socket again = connect()) {
                send(again, "GET /y HTTP/1.1\r\nHost: h\r\n\r\n");
                assertThat(read(again).body()).isEqualTo("GET /y null []");
            }
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
    }

    @Test
    void closingEndsEveryConnectionAndStopsListening() throws Exception {
        start();
        int port = server.address().getPort();
        try (Socket idle = connect();
                Socket mid = connect()) {
            send(mid, "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc");
            await().atMost(Duration.ofSeconds(5)).until(() -> server.connections() == 2);
            server.close();
            assertThat(closedWithoutMore(idle)).isTrue();
            assertThat(closedWithoutMore(mid)).isTrue();
            assertThat(server.connections()).isZero();
        }
        try (Socket late = new Socket()) {
            assertThat(connectRefused(late, port)).isTrue();
        }
    }

    private static boolean connectRefused(Socket s, int port) {
        try {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            return false;
        } catch (IOException refused) {
            return true;
        }
    }
}
