package dev.exactly.payments.edge;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Executors;

/**
 * A forwarding HTTP proxy in front of the processor stand-in, with two gates: one before a request is
 * forwarded (the processor has not seen it) and one after the processor answered (it has captured) but
 * before the answer goes back. A test holds a request at a gate while it breaks something.
 */
final class HoldingProxy implements AutoCloseable {
    private static final Set<String> NOT_FORWARDED =
            Set.of("connection", "content-length", "expect", "host", "upgrade");

    final Gate beforeProcessor = new Gate("before the processor");
    final Gate afterProcessor = new Gate("after the processor captured");
    private final HttpServer server;
    private final URI target;
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private HoldingProxy(URI target) throws IOException {
        this.target = target;
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::forward);
        server.start();
    }

    static HoldingProxy to(URI target) {
        try {
            return new HoldingProxy(target);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    private void forward(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readAllBytes();
            }
            beforeProcessor.pass();
            HttpRequest.Builder request = HttpRequest.newBuilder(
                            target.resolve(exchange.getRequestURI().toString()))
                    .timeout(Duration.ofSeconds(30))
                    .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
            exchange.getRequestHeaders().forEach((name, values) -> {
                if (!NOT_FORWARDED.contains(name.toLowerCase(Locale.ROOT))) {
                    values.forEach(v -> request.header(name, v));
                }
            });
            HttpResponse<byte[]> answer;
            try {
                answer = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            afterProcessor.pass();
            answer.headers().map().forEach((name, values) -> {
                if (!NOT_FORWARDED.contains(name.toLowerCase(Locale.ROOT))
                        && !name.equalsIgnoreCase("transfer-encoding")
                        && !name.startsWith(":")) {
                    exchange.getResponseHeaders().put(name, List.copyOf(values));
                }
            });
            byte[] bytes = answer.body();
            exchange.sendResponseHeaders(answer.statusCode(), bytes.length == 0 ? -1 : bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        client.close();
    }
}
