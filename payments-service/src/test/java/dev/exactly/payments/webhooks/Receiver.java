package dev.exactly.payments.webhooks;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;

/**
 * A webhook receiver for tests: a real HTTP server on a free loopback port that records every delivery
 * (headers, exact body, arrival time) and answers with the status its script gives for the n-th request
 * (1-based). A {@link Hold} may keep a request waiting before it is answered.
 */
final class Receiver implements AutoCloseable {

    /** One delivery as received. */
    record Request(
            String eventId,
            String eventType,
            String attempt,
            String signature,
            String contentType,
            byte[] body,
            long nanos,
            String host,
            String target) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** Runs while a request is held, before it is answered (on the server's thread for that request). */
    @FunctionalInterface
    interface Hold {
        void hold(int n) throws InterruptedException;
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final List<Request> received = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger count = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private volatile IntUnaryOperator statusOf = n -> 200;
    private volatile Hold hold = n -> {};

    private Receiver(HttpServer server) {
        this.server = server;
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    static Receiver start() {
        try {
            return new Receiver(HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Answers the n-th request (1-based) with {@code statusOf(n)}. */
    Receiver answering(IntUnaryOperator statusOf) {
        this.statusOf = statusOf;
        return this;
    }

    /** Holds each request with {@code hold} before answering it. */
    Receiver holding(Hold hold) {
        this.hold = hold;
        return this;
    }

    String url() {
        return "http://127.0.0.1:" + port() + "/hooks";
    }

    int port() {
        return server.getAddress().getPort();
    }

    List<Request> received() {
        synchronized (received) {
            return List.copyOf(received);
        }
    }

    /** The most requests that were being handled at the same moment. */
    int maxInFlight() {
        return maxInFlight.get();
    }

    int inFlight() {
        return inFlight.get();
    }

    private void handle(HttpExchange exchange) throws IOException {
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        try {
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readAllBytes();
            }
            var h = exchange.getRequestHeaders();
            received.add(new Request(
                    h.getFirst("Exactly-Event-Id"),
                    h.getFirst("Exactly-Event-Type"),
                    h.getFirst("Exactly-Delivery-Attempt"),
                    h.getFirst("Exactly-Signature"),
                    h.getFirst("Content-Type"),
                    body,
                    System.nanoTime(),
                    h.getFirst("Host"),
                    exchange.getRequestURI().toString()));
            int n = count.incrementAndGet();
            try {
                hold.hold(n);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.sendResponseHeaders(statusOf.applyAsInt(n), -1);
            exchange.close();
        } finally {
            inFlight.decrementAndGet();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
