package dev.exactly.psp;

import dev.exactly.psp.internal.Checks;
import dev.exactly.psp.internal.Json;
import dev.exactly.psp.internal.JsonException;
import dev.exactly.psp.internal.JsonValue;
import dev.exactly.psp.internal.Wire;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Calls a processor that speaks the simulator's API (JDK {@link HttpClient}, HTTP/1.1). It never
 * retries: the caller decides, using {@link PspException#outcomeUnknown()}. Thread-safe; close it to
 * release its connections.
 *
 * <ul>
 *   <li>200 → the captured charge; 402 → the declined charge (a definite outcome, not an exception)</li>
 *   <li>could not connect → {@link PspUnavailableException} (not captured)</li>
 *   <li>no response in time → {@link PspTimeoutException} (unknown)</li>
 *   <li>connection lost after sending → {@link PspConnectionException} (unknown)</li>
 *   <li>5xx or unreadable answer → {@link PspServerException} (unknown)</li>
 *   <li>other 4xx → {@link PspRequestException} (not captured, except 409)</li>
 * </ul>
 */
public final class PspClient implements AutoCloseable {

    /** Default connect timeout: 2 seconds. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Default request timeout: 10 seconds. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final URI baseUri;
    private final Duration requestTimeout;
    private final HttpClient http;

    private PspClient(Builder b) {
        this.baseUri = b.baseUri;
        this.requestTimeout = b.requestTimeout;
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(b.connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    /** A client with the default timeouts. */
    public static PspClient create(URI baseUri) {
        return builder(baseUri).build();
    }

    /** A builder for a client of the processor at {@code baseUri} (e.g. {@code http://127.0.0.1:9090}). */
    public static Builder builder(URI baseUri) {
        return new Builder(baseUri);
    }

    public URI baseUri() {
        return baseUri;
    }

    /**
     * Charges once per key: a repeat with the same key and request gets the first answer again.
     *
     * @return the charge, captured or declined
     * @throws PspException when there is no answer to return; see {@link PspException#outcomeUnknown()}
     */
    public PspCharge charge(PspChargeRequest request, String idempotencyKey) {
        return charge(request, idempotencyKey, List.of());
    }

    /** As {@link #charge(PspChargeRequest, String)}, asking the simulator to inject these faults. */
    public PspCharge charge(PspChargeRequest request, String idempotencyKey, List<Fault> faults) {
        Objects.requireNonNull(request, "request");
        if (!Checks.validKey(idempotencyKey)) {
            throw new IllegalArgumentException("idempotency key must be 1-255 printable ASCII characters");
        }
        HttpRequest.Builder http = HttpRequest.newBuilder(baseUri.resolve("/v1/charges"))
                .timeout(requestTimeout)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", idempotencyKey)
                .POST(HttpRequest.BodyPublishers.ofString(Json.write(Wire.chargeRequest(request))));
        if (!faults.isEmpty()) {
            http.header(Fault.HEADER, Fault.header(faults));
        }
        HttpResponse<String> response = send(http.build());
        if (response.statusCode() == 200 || response.statusCode() == 402) {
            return readCharge(response);
        }
        throw failure(response);
    }

    /**
     * Asks what happened under a key: the charge (captured or declined), or empty when the processor
     * never recorded one (so a charge with that key has not happened).
     */
    public Optional<PspCharge> findByIdempotencyKey(String idempotencyKey) {
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        HttpResponse<String> response = send(get(
                "/v1/charges?idempotency_key=" + URLEncoder.encode(idempotencyKey, StandardCharsets.UTF_8)));
        if (response.statusCode() == 404) {
            return Optional.empty();
        }
        if (response.statusCode() == 200) {
            return Optional.of(readCharge(response));
        }
        throw failure(response);
    }

    /** The processor's capture log (simulator extension). */
    public List<Capture> captures() {
        HttpResponse<String> response = send(get("/v1/captures"));
        if (response.statusCode() != 200) {
            throw failure(response);
        }
        try {
            return Wire.readCaptures(Json.parse(response.body()));
        } catch (JsonException | IllegalArgumentException e) {
            throw unreadable(response, e);
        }
    }

    /** The processor's counters (simulator extension). */
    public PspStats stats() {
        HttpResponse<String> response = send(get("/v1/stats"));
        if (response.statusCode() != 200) {
            throw failure(response);
        }
        try {
            return Wire.readStats(Json.parse(response.body()));
        } catch (JsonException | IllegalArgumentException e) {
            throw unreadable(response, e);
        }
    }

    @Override
    public void close() {
        http.close();
    }

    private HttpRequest get(String pathAndQuery) {
        return HttpRequest.newBuilder(baseUri.resolve(pathAndQuery)).timeout(requestTimeout).GET().build();
    }

    private HttpResponse<String> send(HttpRequest request) {
        String what = request.method() + " " + request.uri();
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (HttpConnectTimeoutException e) {
            throw new PspUnavailableException(what + ": connect timed out", e);
        } catch (HttpTimeoutException e) {
            throw new PspTimeoutException(what + ": no response within " + requestTimeout, e);
        } catch (ConnectException | UnresolvedAddressException e) {
            throw new PspUnavailableException(what + ": cannot connect (" + e + ")", e);
        } catch (IOException e) {
            throw new PspConnectionException(what + ": connection lost (" + e + ")", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PspConnectionException(what + ": interrupted while waiting for the answer", e);
        }
    }

    private static PspCharge readCharge(HttpResponse<String> response) {
        try {
            JsonValue json = Json.parse(response.body());
            return Wire.readCharge(json);
        } catch (JsonException | IllegalArgumentException e) {
            throw unreadable(response, e);
        }
    }

    private static PspServerException unreadable(HttpResponse<String> response, RuntimeException e) {
        return new PspServerException(response.statusCode(), null,
                "unreadable answer from " + response.uri() + ": " + e.getMessage());
    }

    private static PspException failure(HttpResponse<String> response) {
        int status = response.statusCode();
        Wire.ErrorBody error = Wire.readError(response.body());
        @Nullable String code = error.code();
        String message = status + " from " + response.request().method() + " " + response.uri()
                + (error.message() != null ? ": " + error.message() : "");
        if (status >= 400 && status < 500) {
            return new PspRequestException(status, code, message);
        }
        return new PspServerException(status, code, message);
    }

    /** Validating builder. */
    public static final class Builder {
        private final URI baseUri;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;

        private Builder(URI baseUri) {
            this.baseUri = Objects.requireNonNull(baseUri, "baseUri");
            if (!"http".equals(baseUri.getScheme()) && !"https".equals(baseUri.getScheme())) {
                throw new IllegalArgumentException("baseUri must be http or https: " + baseUri);
            }
        }

        /** How long opening a connection may take. */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive(timeout, "connectTimeout");
            return this;
        }

        /** How long to wait for a response once the request is sent. */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "requestTimeout");
            return this;
        }

        public PspClient build() {
            return new PspClient(this);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive");
            }
            return d;
        }
    }
}
