package dev.exactly.idempotency.servlet;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** One HTTP request to a test server, built fluently and sent with the JDK client. */
public final class Call {
    /** Where a test server listens. */
    @FunctionalInterface
    public interface Endpoint {
        URI uri(String pathAndQuery);
    }

    static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private final HttpRequest.Builder builder;
    private final String method;
    private HttpRequest.BodyPublisher body = HttpRequest.BodyPublishers.noBody();

    private Call(Endpoint server, String method, String pathAndQuery) {
        this.method = method;
        this.builder = HttpRequest.newBuilder(server.uri(pathAndQuery)).timeout(Duration.ofSeconds(30));
    }

    public static Call post(Endpoint server, String path) {
        return new Call(server, "POST", path);
    }

    public static Call request(Endpoint server, String method, String path) {
        return new Call(server, method, path);
    }

    public Call key(String key) {
        return header(IdempotencyFilter.KEY_HEADER, key);
    }

    public Call apiKey(String apiKey) {
        return header("Authorization", "Bearer " + apiKey);
    }

    public Call header(String name, String value) {
        builder.header(name, value);
        return this;
    }

    public Call json(String json) {
        builder.header("Content-Type", "application/json");
        body = HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8);
        return this;
    }

    public Call form(String encoded) {
        builder.header("Content-Type", "application/x-www-form-urlencoded");
        body = HttpRequest.BodyPublishers.ofString(encoded, StandardCharsets.UTF_8);
        return this;
    }

    public Call bytes(byte[] bytes) {
        body = HttpRequest.BodyPublishers.ofByteArray(bytes);
        return this;
    }

    /** A body of unknown length: sent chunked. */
    public Call chunked(byte[] bytes) {
        body = HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes));
        return this;
    }

    private HttpRequest build() {
        return builder.method(method, body).build();
    }

    public HttpResponse<byte[]> send() throws IOException, InterruptedException {
        return CLIENT.send(build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    public CompletableFuture<HttpResponse<byte[]>> sendAsync() {
        return CLIENT.sendAsync(build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    public static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }
}
