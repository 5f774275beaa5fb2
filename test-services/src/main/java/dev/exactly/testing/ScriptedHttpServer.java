package dev.exactly.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A real HTTP server on a free loopback port (the JDK's {@code HttpServer}) that answers from a script and
 * records every request it received, byte for byte: for tests of HTTP clients. Replies are used in order,
 * one per request; when the script is empty, every request gets {@code 200 {}}. A reply may be held
 * (a slow server: the client times out), or dropped (the connection closes without an answer).
 */
public final class ScriptedHttpServer implements AutoCloseable {

    /**
     * One request as received.
     *
     * @param method  the method
     * @param path    path and query
     * @param headers header names in lower case, with their values
     * @param body    the body bytes
     * @param nanos   {@link System#nanoTime()} on arrival
     */
    public record Received(String method, String path, Map<String, List<String>> headers, byte[] body, long nanos) {
        /** The first value of a header, or null. */
        public @Nullable String header(String name) {
            List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
            return values == null || values.isEmpty() ? null : values.getFirst();
        }

        public String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /**
     * One scripted answer.
     *
     * @param status  the status
     * @param headers response headers
     * @param body    response body
     * @param hold    how long to hold the answer before sending it (the server is slow)
     * @param dropConnection close the connection instead of answering
     */
    public record Reply(int status, Map<String, String> headers, byte[] body, Duration hold, boolean dropConnection) {
        public static Reply status(int status) {
            return new Reply(status, Map.of(), new byte[0], Duration.ZERO, false);
        }

        public static Reply json(int status, String json) {
            return new Reply(
                    status,
                    Map.of("Content-Type", "application/json"),
                    json.getBytes(StandardCharsets.UTF_8),
                    Duration.ZERO,
                    false);
        }

        /** The connection is closed without an answer, after the request was read. */
        public static Reply drop() {
            return new Reply(0, Map.of(), new byte[0], Duration.ZERO, true);
        }

        public Reply header(String name, String value) {
            Map<String, String> h = new LinkedHashMap<>(headers);
            h.put(name, value);
            return new Reply(status, h, body, hold, dropConnection);
        }

        /** Holds the answer for {@code duration} (released early when the server closes). */
        public Reply heldFor(Duration duration) {
            return new Reply(status, headers, body, duration, dropConnection);
        }
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final ConcurrentLinkedQueue<Reply> script = new ConcurrentLinkedQueue<>();
    private final List<Received> received = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch closing = new CountDownLatch(1);

    private ScriptedHttpServer(HttpServer server) {
        this.server = server;
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    /** Starts a server on a free port of 127.0.0.1. */
    public static ScriptedHttpServer start() {
        try {
            return new ScriptedHttpServer(
                    HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a test HTTP server", e);
        }
    }

    /** The server's URI for {@code path} (e.g. {@code /v1/charges}). */
    public URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Appends replies to the script. */
    public ScriptedHttpServer reply(Reply... replies) {
        script.addAll(List.of(replies));
        return this;
    }

    /** Every request received so far, in arrival order. */
    public List<Received> received() {
        synchronized (received) {
            return List.copyOf(received);
        }
    }

    /** How many requests were received. */
    public int requestCount() {
        return received.size();
    }

    private void handle(HttpExchange exchange) throws IOException {
        byte[] body;
        try (InputStream in = exchange.getRequestBody()) {
            body = in.readAllBytes();
        }
        Map<String, List<String>> headers = new LinkedHashMap<>();
        exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), List.copyOf(v)));
        received.add(new Received(
                exchange.getRequestMethod(),
                exchange.getRequestURI().toString(),
                Map.copyOf(headers),
                body,
                System.nanoTime()));
        Reply reply = Objects.requireNonNullElse(script.poll(), Reply.json(200, "{}"));
        if (!reply.hold().isZero()) {
            try {
                closing.await(reply.hold().toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (reply.dropConnection()) {
            // no status line: closing the exchange now closes the connection without an answer
            exchange.close();
            return;
        }
        reply.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
        exchange.sendResponseHeaders(reply.status(), reply.body().length == 0 ? -1 : reply.body().length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(reply.body());
        }
    }

    @Override
    public void close() {
        closing.countDown();
        server.stop(0);
        executor.shutdownNow();
    }
}
