package dev.exactly.idempotency.servlet;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** One HTTP request to the test server, built fluently and sent with the JDK client. */
final class Call {
    static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private final HttpRequest.Builder builder;
    private final String method;
    private HttpRequest.BodyPublisher body = HttpRequest.BodyPublishers.noBody();

    private Call(TestServer server, String method, String pathAndQuery) {
        this.method = method;
        this.builder = HttpRequest.newBuilder(server.uri(pathAndQuery)).timeout(Duration.ofSeconds(30));
    }

    static Call post(TestServer server, String path) {
        return new Call(server, "POST", path);
    }

    static Call request(TestServer server, String method, String path) {
        return new Call(server, method, path);
    }

    Call key(String key) {
        return header(IdempotencyFilter.KEY_HEADER, key);
    }

    Call apiKey(String apiKey) {
        return header("Authorization", "Bearer " + apiKey);
    }

    Call header(String name, String value) {
        builder.header(name, value);
        return this;
    }

    Call json(String json) {
        builder.header("Content-Type", "application/json");
        body = HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8);
        return this;
    }

    Call form(String encoded) {
        builder.header("Content-Type", "application/x-www-form-urlencoded");
        body = HttpRequest.BodyPublishers.ofString(encoded, StandardCharsets.UTF_8);
        return this;
    }

    Call bytes(byte[] bytes) {
        body = HttpRequest.BodyPublishers.ofByteArray(bytes);
        return this;
    }

    /** A body of unknown length: sent chunked. */
    Call chunked(byte[] bytes) {
        body = HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes));
        return this;
    }

    private HttpRequest build() {
        return builder.method(method, body).build();
    }

    HttpResponse<byte[]> send() throws IOException, InterruptedException {
        return CLIENT.send(build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    CompletableFuture<HttpResponse<byte[]>> sendAsync() {
        return CLIENT.sendAsync(build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }
}
