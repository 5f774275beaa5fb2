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
import dev.exactly.psp.internal.PlainHttpClient;
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
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Calls a processor that speaks the simulator's API over HTTP/1.1: on {@code http} through a blocking
 * client on the calling thread that writes each request in one write and keeps its connections
 * ({@link PlainHttpClient}), on {@code https} through the JDK's {@link HttpClient}. A charge (and
 * likewise a capture, a void and a refund) goes through the {@link IdempotentHttpClient}: its key is the caller's (the downstream key, never changed
 * here) and the same bytes go out on every attempt; a connection refused or lost, 409, 429 and 502-504
 * are retried with backoff and full jitter while the {@link Builder#retryPolicy retry policy} allows (by
 * default three attempts within the request timeout, so a call takes no longer than it did without
 * retries: an attempt that times out uses the whole budget). When no final answer came, the exception says
 * whether the outcome is unknown ({@link PspException#outcomeUnknown()}), counting every attempt: after
 * an attempt that may have reached the processor, a later refused connection still leaves it unknown.
 * The read-only calls are sent once. Thread-safe; close it to release its connections.
 *
 * <ul>
 *   <li>charge: 200 → the captured or authorized charge; 402 → the declined charge (a definite outcome,
 *       not an exception)</li>
 *   <li>capture, void: 200 → the charge after it; 402 → {@link PspRequestException} with the refusal's
 *       code ({@link PspRequestException#refused()}: recorded under the key, nothing changed)</li>
 *   <li>refund: 200 → the succeeded refund; 402 → the failed refund (a definite outcome)</li>
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
        this.http = "http".equals(baseUri.getScheme())
                ? new PlainHttpClient(b.connectTimeout)
                : HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(b.connectTimeout)
                        .followRedirects(HttpClient.Redirect.NEVER)
                        // what the client's selector thread hands off (reading and parsing an answer, completing the
                        // caller's wait) runs on that thread instead of hopping to a pool thread first: every call here
                        // takes its body as bytes and nothing the client runs blocks
                        .executor(Runnable::run)
                        .build();
        this.charges =
                IdempotentHttpClient.builder(http).policy(b.retryPolicy()).build();
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
        Objects.requireNonNull(faults, "faults");
        IdempotentResponse response = post("/v1/charges", Wire.chargeRequest(request), idempotencyKey, faults);
        if (response.status() == 200 || response.status() == 402) {
            PspCharge charge = readCharge(response.status(), response.bodyText(), response.uri());
            agree(
                    response,
                    charge.status() == ChargeStatus.DECLINED,
                    charge.status().wireName());
            return charge;
        }
        // after several attempts a 4xx cannot promise that an earlier one captured nothing
        throw failure(response.status(), response.bodyText(), "POST", response.uri(), response.attempts() > 1);
    }

    /**
     * Authorizes once per key: places a hold ({@code "capture": false}) to capture or void later; a
     * repeat with the same key and request gets the first answer again.
     *
     * @return the charge, authorized (with its expiry) or declined
     * @throws PspException when there is no answer to return; see {@link PspException#outcomeUnknown()}
     */
    public PspCharge authorize(PspChargeRequest request, String idempotencyKey) {
        return charge(request.authorizeOnly(), idempotencyKey, List.of());
    }

    /** Captures the whole hold, once per key. See {@link #capture(String, OptionalLong, String, List)}. */
    public PspCharge capture(String chargeId, String idempotencyKey) {
        return capture(chargeId, OptionalLong.empty(), idempotencyKey, List.of());
    }

    /** Captures {@code amount} of the hold, once per key. See {@link #capture(String, OptionalLong, String, List)}. */
    public PspCharge capture(String chargeId, long amount, String idempotencyKey) {
        return capture(chargeId, OptionalLong.of(amount), idempotencyKey, List.of());
    }

    /**
     * Captures a hold, all of it ({@code amount} empty) or a part (at most the authorized amount), once
     * per key; a charge captures at most once whatever the keys. Faults ride on every attempt.
     *
     * @return the charge after the capture (status captured, {@link PspCharge#amountCaptured()})
     * @throws PspRequestException 402 when the processor refused ({@link PspRequestException#refused()};
     *                             codes {@code charge_already_captured}, {@code charge_voided},
     *                             {@code authorization_expired}, {@code charge_declined},
     *                             {@code amount_too_large}, {@code resource_missing}); nothing captured
     * @throws PspException        when there is no answer; see {@link PspException#outcomeUnknown()}
     */
    public PspCharge capture(String chargeId, OptionalLong amount, String idempotencyKey, List<Fault> faults) {
        Objects.requireNonNull(amount, "amount");
        return holdAction(chargeId, "capture", Wire.captureRequest(amount), idempotencyKey, faults);
    }

    /** Voids a hold, once per key. See {@link #voidAuthorization(String, String, List)}. */
    public PspCharge voidAuthorization(String chargeId, String idempotencyKey) {
        return voidAuthorization(chargeId, idempotencyKey, List.of());
    }

    /**
     * Voids (releases) a hold, once per key; a voided hold cannot be captured. A hold already voided or
     * expired is answered as it is. Faults ride on every attempt.
     *
     * @return the charge after the void (status voided, or expired)
     * @throws PspRequestException 402 when the processor refused ({@link PspRequestException#refused()};
     *                             codes {@code charge_already_captured}, {@code charge_declined},
     *                             {@code resource_missing}); nothing changed
     * @throws PspException        when there is no answer; see {@link PspException#outcomeUnknown()}
     */
    public PspCharge voidAuthorization(String chargeId, String idempotencyKey, List<Fault> faults) {
        return holdAction(chargeId, "void", JsonValue.object().build(), idempotencyKey, faults);
    }

    private PspCharge holdAction(
            String chargeId, String action, JsonValue body, String idempotencyKey, List<Fault> faults) {
        Objects.requireNonNull(chargeId, "chargeId");
        Objects.requireNonNull(faults, "faults");
        String path = "/v1/charges/" + pathSegment(chargeId) + "/" + action;
        IdempotentResponse response = post(path, body, idempotencyKey, faults);
        if (response.status() == 200) {
            return readCharge(response.status(), response.bodyText(), response.uri());
        }
        throw failure(response.status(), response.bodyText(), "POST", response.uri(), response.attempts() > 1);
    }

    /** Refunds once per key. See {@link #refund(PspRefundRequest, String, List)}. */
    public PspRefund refund(PspRefundRequest request, String idempotencyKey) {
        return refund(request, idempotencyKey, List.of());
    }

    /**
     * Refunds part or all of a captured charge once per key: a repeat with the same key and request gets
     * the first answer again; the refunds of a charge never add up to more than it captured. Faults ride
     * on every attempt.
     *
     * @return the refund, succeeded or failed ({@link PspRefund#failureCode()}: {@code amount_too_large},
     *         {@code charge_not_captured}, {@code currency_mismatch}, {@code resource_missing})
     * @throws PspException when there is no answer to return; see {@link PspException#outcomeUnknown()}
     */
    public PspRefund refund(PspRefundRequest request, String idempotencyKey, List<Fault> faults) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(faults, "faults");
        IdempotentResponse response = post("/v1/refunds", Wire.refundRequest(request), idempotencyKey, faults);
        if (response.status() == 200 || response.status() == 402) {
            PspRefund refund = readRefund(response.status(), response.bodyText(), response.uri());
            agree(response, !refund.succeeded(), refund.succeeded() ? "succeeded" : "failed");
            return refund;
        }
        throw failure(response.status(), response.bodyText(), "POST", response.uri(), response.attempts() > 1);
    }

    /** Sends an operation through the idempotent client: the caller's key, the same bytes on every attempt. */
    private IdempotentResponse post(String path, JsonValue body, String idempotencyKey, List<Fault> faults) {
        if (!Checks.validKey(idempotencyKey)) {
            throw new IllegalArgumentException("idempotency key must be 1-255 printable ASCII characters");
        }
        URI target = baseUri.resolve(path);
        IdempotentRequest.Builder post = IdempotentRequest.builder("POST", target)
                .header("Content-Type", "application/json")
                .body(Json.write(body).getBytes(StandardCharsets.UTF_8));
        if (!faults.isEmpty()) {
            post.header(Fault.HEADER, Fault.header(faults));
        }
        try {
            return charges.send(post.build(), idempotencyKey);
        } catch (IdempotencyKeyReusedException reused) {
            IdempotentResponse answer = reused.answer();
            throw new PspRequestException(
                    answer.status(),
                    "idempotency_key_reused",
                    answer.status() + " from POST " + answer.uri() + ": " + reused.getMessage(),
                    answer.attempts() > 1);
        } catch (RetriesExhaustedException exhausted) {
            throw noAnswer(path, exhausted);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PspConnectionException("POST " + target + ": interrupted", e);
        }
    }

    /** The exception for an operation without a final answer, telling whether any attempt may have acted. */
    private static PspException noAnswer(String path, RetriesExhaustedException e) {
        String what = "POST " + path + ", " + e.attempts() + " attempt" + (e.attempts() == 1 ? "" : "s") + ": ";
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
     * Asks what happened under a charge key: the charge as it is now (captured, declined, or a hold:
     * authorized, captured, voided or expired), or empty when the processor never recorded one (so a
     * charge with that key has not happened).
     */
    public Optional<PspCharge> findByIdempotencyKey(String idempotencyKey) {
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        return find(
                "/v1/charges?idempotency_key=" + URLEncoder.encode(idempotencyKey, StandardCharsets.UTF_8),
                PspClient::readCharge);
    }

    /** The charge with this id as it is now, or empty when there is none. */
    public Optional<PspCharge> findById(String chargeId) {
        Objects.requireNonNull(chargeId, "chargeId");
        return find("/v1/charges/" + pathSegment(chargeId), PspClient::readCharge);
    }

    /**
     * Asks what happened under a refund key: the refund (succeeded or failed), or empty when the
     * processor never recorded one (so a refund with that key has not happened).
     */
    public Optional<PspRefund> findRefundByIdempotencyKey(String idempotencyKey) {
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        return find(
                "/v1/refunds?idempotency_key=" + URLEncoder.encode(idempotencyKey, StandardCharsets.UTF_8),
                PspClient::readRefund);
    }

    /** The refund with this id, or empty when there is none. */
    public Optional<PspRefund> findRefundById(String refundId) {
        Objects.requireNonNull(refundId, "refundId");
        return find("/v1/refunds/" + pathSegment(refundId), PspClient::readRefund);
    }

    private <T> Optional<T> find(String pathAndQuery, Reader<T> reader) {
        HttpResponse<String> response = send(get(pathAndQuery));
        if (response.statusCode() == 404) {
            return Optional.empty();
        }
        if (response.statusCode() == 200) {
            return Optional.of(reader.read(response.statusCode(), response.body(), response.uri()));
        }
        throw failure(response);
    }

    @FunctionalInterface
    private interface Reader<T> {
        T read(int status, String body, URI uri);
    }

    /** The processor's capture log (simulator extension). */
    public List<Capture> captures() {
        return list("/v1/captures", Wire::readCaptures);
    }

    /**
     * The captures committed in {@code [from, to)}, oldest first, for reconciliation: each with the key
     * of the request that captured, the charge id, amount, currency and time.
     */
    public List<Capture> captures(Instant from, Instant to) {
        return list("/v1/captures" + window(from, to), Wire::readCaptures);
    }

    /** The processor's refund log: every succeeded refund, oldest first. */
    public List<Refund> refunds() {
        return list("/v1/refunds", Wire::readRefunds);
    }

    /**
     * The refunds committed in {@code [from, to)}, oldest first, for reconciliation: each with its id,
     * key, charge id, amount, currency and time.
     */
    public List<Refund> refunds(Instant from, Instant to) {
        return list("/v1/refunds" + window(from, to), Wire::readRefunds);
    }

    private static String window(Instant from, Instant to) {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        return "?from=" + from + "&to=" + to;
    }

    private <T> List<T> list(String pathAndQuery, Function<JsonValue, List<T>> reader) {
        HttpResponse<String> response = send(get(pathAndQuery));
        if (response.statusCode() != 200) {
            throw failure(response);
        }
        try {
            return reader.apply(Json.parse(response.body()));
        } catch (JsonException | IllegalArgumentException e) {
            throw unreadable(response, e);
        }
    }

    private static String pathSegment(String id) {
        return URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
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
        return HttpRequest.newBuilder(baseUri.resolve(pathAndQuery))
                .timeout(requestTimeout)
                .GET()
                .build();
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

    /**
     * An answer is read only if its HTTP status and its body agree: 402 for a declined charge or a failed
     * refund, 200 otherwise. One that says both (402 with a captured charge) is no answer at all: the outcome
     * is unknown, and the caller asks the processor again instead of taking either word for it.
     */
    private static void agree(IdempotentResponse response, boolean refusedInBody, String bodyStatus) {
        if ((response.status() == 402) != refusedInBody) {
            throw new PspServerException(
                    response.status(),
                    null,
                    "contradictory answer from " + response.uri() + ": HTTP " + response.status()
                            + " with a body whose status is " + bodyStatus);
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

    private static PspRefund readRefund(int status, String body, URI uri) {
        try {
            return Wire.readRefund(Json.parse(body));
        } catch (JsonException | IllegalArgumentException e) {
            throw new PspServerException(status, null, "unreadable answer from " + uri + ": " + e.getMessage());
        }
    }

    private static PspServerException unreadable(HttpResponse<String> response, RuntimeException e) {
        return new PspServerException(
                response.statusCode(), null, "unreadable answer from " + response.uri() + ": " + e.getMessage());
    }

    private static PspException failure(HttpResponse<String> response) {
        return failure(
                response.statusCode(), response.body(), response.request().method(), response.uri(), false);
    }

    /**
     * @param afterRetries whether earlier attempts of the same call came before this answer (then a 4xx
     *                     cannot promise that nothing was captured)
     */
    private static PspException failure(int status, String body, String method, URI uri, boolean afterRetries) {
        Wire.ErrorBody error = Wire.readError(body);
        @Nullable String code = error.code();
        String message =
                status + " from " + method + " " + uri + (error.message() != null ? ": " + error.message() : "");
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
            return RetryPolicy.custom()
                    .maxAttempts(3)
                    .initialDelay(Duration.ofMillis(100))
                    .maxDelay(Duration.ofSeconds(1))
                    .deadline(requestTimeout)
                    .attemptTimeout(requestTimeout)
                    .build();
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
