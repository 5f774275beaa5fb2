package dev.exactly.psp;

import dev.exactly.idempotency.client.IdempotencyKeyReusedException;
import dev.exactly.idempotency.client.IdempotentHttpClient;
import dev.exactly.idempotency.client.IdempotentRequest;
import dev.exactly.idempotency.client.IdempotentResponse;
import dev.exactly.idempotency.client.RetriesExhaustedException;
import dev.exactly.idempotency.client.RetryPolicy;
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
 * Calls a processor that speaks the simulator's API (JDK {@link HttpClient}, HTTP/1.1). A charge goes
 * through the {@link IdempotentHttpClient}: its key is the caller's (the downstream key, never changed
 * here) and the same bytes go out on every attempt; a connection refused or lost, 409, 429 and 502-504
 * are retried with backoff and full jitter while the {@link Builder#retryPolicy retry policy} allows (by
 * default three attempts within the request timeout, so a call takes no longer than it did without
 * retries: an attempt that times out uses the whole budget). When no final answer came, the exception says
 * whether the outcome is unknown ({@link PspException#outcomeUnknown()}), counting every attempt: after
 * an attempt that may have reached the processor, a later refused connection still leaves it unknown.
 * The read-only calls are sent once. Thread-safe; close it to release its connections.
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
    private final IdempotentHttpClient charges;

    private PspClient(Builder b) {
        this.baseUri = b.baseUri;
        this.requestTimeout = b.requestTimeout;
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(b.connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
        this.charges = IdempotentHttpClient.builder(http).policy(b.retryPolicy()).build();
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

    /** How a charge is retried. */
    public RetryPolicy retryPolicy() {
        return charges.policy();
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

    /**
     * As {@link #charge(PspChargeRequest, String)}, asking the simulator to inject these faults (into every
     * attempt: the header goes out with each).
     */
    public PspCharge charge(PspChargeRequest request, String idempotencyKey, List<Fault> faults) {
        Objects.requireNonNull(request, "request");
        if (!Checks.validKey(idempotencyKey)) {
            throw new IllegalArgumentException("idempotency key must be 1-255 printable ASCII characters");
        }
        IdempotentRequest.Builder post = IdempotentRequest.builder("POST", baseUri.resolve("/v1/charges"))
                .header("Content-Type", "application/json")
                .body(Json.write(Wire.chargeRequest(request)).getBytes(StandardCharsets.UTF_8));
        if (!faults.isEmpty()) {
            post.header(Fault.HEADER, Fault.header(faults));
        }
        IdempotentResponse response;
        try {
            response = charges.send(post.build(), idempotencyKey);
        } catch (IdempotencyKeyReusedException reused) {
            IdempotentResponse answer = reused.answer();
            throw new PspRequestException(answer.status(), "idempotency_key_reused",
                    answer.status() + " from POST " + answer.uri() + ": " + reused.getMessage(), answer.attempts() > 1);
        } catch (RetriesExhaustedException exhausted) {
            throw noAnswer(exhausted);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PspConnectionException("POST " + baseUri.resolve("/v1/charges") + ": interrupted", e);
        }
        if (response.status() == 200 || response.status() == 402) {
            return readCharge(response.status(), response.bodyText(), response.uri());
        }
        // after several attempts a 4xx cannot promise that an earlier one captured nothing
        throw failure(response.status(), response.bodyText(), "POST", response.uri(), response.attempts() > 1);
    }

    /** The exception for a charge without a final answer, telling whether any attempt may have captured. */
    private static PspException noAnswer(RetriesExhaustedException e) {
        String what = "POST /v1/charges, " + e.attempts() + " attempt" + (e.attempts() == 1 ? "" : "s") + ": ";
        if (!e.mayHaveExecuted()) {
            return new PspUnavailableException(what + "cannot connect (" + e.getMessage() + ")", e);
        }
        Optional<IdempotentResponse> last = e.lastAnswer();
        if (last.isPresent()) {
            IdempotentResponse answer = last.get();
            return failure(answer.status(), answer.bodyText(), "POST", answer.uri(), true);
        }
        IOException failure = e.lastFailure().orElse(null);
        if (failure instanceof HttpTimeoutException && !(failure instanceof HttpConnectTimeoutException)) {
            return new PspTimeoutException(what + "no response within the request timeout", e);
        }
        return new PspConnectionException(what + "no answer (" + e.getMessage() + ")", e);
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
            return Optional.of(readCharge(response.statusCode(), response.body(), response.uri()));
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

    private static PspCharge readCharge(int status, String body, URI uri) {
        try {
            JsonValue json = Json.parse(body);
            return Wire.readCharge(json);
        } catch (JsonException | IllegalArgumentException e) {
            throw new PspServerException(status, null, "unreadable answer from " + uri + ": " + e.getMessage());
        }
    }

    private static PspServerException unreadable(HttpResponse<String> response, RuntimeException e) {
        return new PspServerException(response.statusCode(), null,
                "unreadable answer from " + response.uri() + ": " + e.getMessage());
    }

    private static PspException failure(HttpResponse<String> response) {
        return failure(response.statusCode(), response.body(), response.request().method(), response.uri(), false);
    }

    /**
     * @param afterRetries whether earlier attempts of the same call came before this answer (then a 4xx
     *                     cannot promise that nothing was captured)
     */
    private static PspException failure(int status, String body, String method, URI uri, boolean afterRetries) {
        Wire.ErrorBody error = Wire.readError(body);
        @Nullable String code = error.code();
        String message = status + " from " + method + " " + uri
                + (error.message() != null ? ": " + error.message() : "");
        if (status >= 400 && status < 500) {
            return new PspRequestException(status, code, message, afterRetries);
        }
        return new PspServerException(status, code, message);
    }

    /** Validating builder. */
    public static final class Builder {
        private final URI baseUri;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private @Nullable RetryPolicy retryPolicy;

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

        /**
         * How long to wait for a response once the request is sent; for a charge, also the bound of all its
         * attempts (unless a {@link #retryPolicy} says otherwise).
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "requestTimeout");
            return this;
        }

        /**
         * How a charge is retried (same key, same bytes). Default: three attempts, backoff 100 ms × 2ⁿ⁻¹
         * capped at 1 s with full jitter, the whole call within the request timeout.
         */
        public Builder retryPolicy(RetryPolicy policy) {
            this.retryPolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        private RetryPolicy retryPolicy() {
            if (retryPolicy != null) {
                return retryPolicy;
            }
            return RetryPolicy.custom().maxAttempts(3).initialDelay(Duration.ofMillis(100)).maxDelay(Duration.ofSeconds(1))
                    .deadline(requestTimeout).attemptTimeout(requestTimeout).build();
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
