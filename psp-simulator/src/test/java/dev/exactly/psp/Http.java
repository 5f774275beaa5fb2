package dev.exactly.psp;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Raw HTTP for tests that check exact statuses, headers and bytes. */
final class Http implements AutoCloseable {

    static final String CHARGE = "{\"amount\": 1999, \"currency\": \"usd\", \"source\": \"tok_visa\","
            + " \"description\": \"order 17\", \"metadata\": {\"order\": \"17\"}}";

    private final URI base;
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    Http(URI base) {
        this.base = base;
    }

    HttpResponse<String> post(String path, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.build());
    }

    HttpResponse<String> charge(String key, String body, String... headers) {
        String[] all = new String[headers.length + 2];
        all[0] = "Idempotency-Key";
        all[1] = key;
        System.arraycopy(headers, 0, all, 2, headers.length);
        return post("/v1/charges", body, all);
    }

    /** A POST with an {@code Idempotency-Key} to any operation's path. */
    HttpResponse<String> keyed(String path, String key, String body, String... headers) {
        String[] all = new String[headers.length + 2];
        all[0] = "Idempotency-Key";
        all[1] = key;
        System.arraycopy(headers, 0, all, 2, headers.length);
        return post(path, body, all);
    }

    HttpResponse<String> get(String path) {
        return send(HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(10))
                .GET()
                .build());
    }

    HttpResponse<String> delete(String path) {
        return send(HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(10))
                .DELETE()
                .build());
    }

    private HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
