package dev.exactly.idempotency.client.spring;

import dev.exactly.idempotency.client.IdempotencyKeyReusedException;
import dev.exactly.idempotency.client.IdempotencyKeys;
import dev.exactly.idempotency.client.IdempotentClientListener;
import dev.exactly.idempotency.client.IdempotentResponse;
import dev.exactly.idempotency.client.RetriesExhaustedException;
import dev.exactly.idempotency.client.RetryDecision;
import dev.exactly.idempotency.client.RetryPolicy;
import dev.exactly.idempotency.client.RetrySequence;
import dev.exactly.idempotency.client.Sleeper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Retries {@code RestClient} (or {@code RestTemplate}) requests that carry an {@code Idempotency-Key}, by
 * the same rules as {@link dev.exactly.idempotency.client.IdempotentHttpClient}: the same key and the same
 * body bytes on every attempt; connection errors, timeouts, 409, 429, 502-504 retried with capped
 * exponential backoff and full jitter, {@code Retry-After} honoured within the deadline; every other answer
 * handed to the {@code RestClient} as it came (its status handlers apply); 422
 * {@code idempotency-key-reused} thrown as {@link IdempotencyKeyReusedException}; attempts or deadline
 * used up thrown as {@link RetriesExhaustedException}. A request without a key goes out once, untouched:
 * without a key a retry could run the action twice.
 *
 * <pre>{@code
 * RestClient payments = RestClient.builder().baseUrl(base)
 *         .requestInterceptor(IdempotencyRetryInterceptor.create())
 *         .build();
 * payments.post().uri("/v1/charges")
 *         .header("Idempotency-Key", IdempotencyKeys.derive("checkout", userId, orderId))
 *         .contentType(MediaType.APPLICATION_JSON).body(charge)
 *         .retrieve().toEntity(String.class);
 * }</pre>
 *
 * Each attempt's timeout is the request factory's (set its read timeout to the policy's attempt timeout);
 * the policy's deadline bounds the retries.
 */
public final class IdempotencyRetryInterceptor implements ClientHttpRequestInterceptor {
    private final RetryPolicy policy;
    private final InstantSource clock;
    private final RandomGenerator random;
    private final Sleeper sleeper;
    private final IdempotentClientListener listener;

    private IdempotencyRetryInterceptor(Builder b) {
        this.policy = b.policy;
        this.clock = b.clock;
        this.random = b.random;
        this.sleeper = b.sleeper;
        this.listener = b.listener;
    }

    /** With the default {@link RetryPolicy}. */
    public static IdempotencyRetryInterceptor create() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        String key = request.getHeaders().getFirst(IdempotencyKeys.HEADER);
        if (key == null) {
            return execution.execute(request, body);
        }
        IdempotencyKeys.requireValid(key);
        RetrySequence retries = RetrySequence.start(policy, clock, random);
        while (true) {
            retries.beginAttempt();
            IdempotentClientListener.Attempt attempt =
                    new IdempotentClientListener.Attempt(key, retries.attempts(), request.getURI());
            notify(() -> listener.attemptStarted(attempt));
            ClientHttpResponse response = null;
            IOException failure = null;
            RetryDecision decision;
            try {
                response = execution.execute(request, body);
                int status = response.getStatusCode().value();
                HttpHeaders headers = response.getHeaders();
                if (status == 422) {
                    byte[] problem = read(response);
                    response = new BufferedResponse(response, problem);
                    if (IdempotencyKeyReusedException.isKeyReused(status, problem)) {
                        response.close();
                        throw new IdempotencyKeyReusedException(SpringAnswers.answer(
                                status, headers, problem, key, attempt.number(), request.getURI()));
                    }
                }
                notify(() -> listener.attemptAnswered(attempt, status, SpringAnswers.headers(headers), new byte[0]));
                decision = retries.afterAnswer(
                        status,
                        headers.getFirst(HttpHeaders.RETRY_AFTER),
                        IdempotentResponse.isReplay(SpringAnswers.headers(headers)));
            } catch (IOException e) {
                failure = e;
                IOException error = e;
                notify(() -> listener.attemptFailed(attempt, error));
                decision = retries.afterFailure(e);
            }
            switch (decision) {
                case RetryDecision.Final f -> {
                    return Objects.requireNonNull(response, "a final decision follows an answer");
                }
                case RetryDecision.Retry retry -> {
                    closeQuietly(response);
                    notify(() -> listener.retryScheduled(attempt, retry.delay(), retry.retryAfter()));
                    pause(retry);
                }
                case RetryDecision.GiveUp giveUp -> {
                    var last = response == null
                            ? null
                            : SpringAnswers.answer(
                                    response.getStatusCode().value(),
                                    response.getHeaders(),
                                    readQuietly(response),
                                    key,
                                    retries.attempts(),
                                    request.getURI());
                    closeQuietly(response);
                    throw new RetriesExhaustedException(
                            key, giveUp, retries.attempts(), retries.mayHaveExecuted(), last, failure);
                }
            }
        }
    }

    private void pause(RetryDecision.Retry retry) throws InterruptedIOException {
        try {
            sleeper.sleep(retry.delay());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException interrupted = new InterruptedIOException("interrupted while waiting to retry");
            interrupted.initCause(e);
            throw interrupted;
        }
    }

    private static byte[] read(ClientHttpResponse response) throws IOException {
        try (InputStream in = response.getBody()) {
            return in.readNBytes(SpringAnswers.MAX_READ);
        }
    }

    private static byte[] readQuietly(ClientHttpResponse response) {
        try {
            return read(response);
        } catch (IOException e) {
            return new byte[0];
        }
    }

    private static void closeQuietly(@Nullable ClientHttpResponse response) {
        if (response == null) {
            return;
        }
        try {
            response.getBody().transferTo(OutputStreamSink.INSTANCE);
        } catch (IOException | RuntimeException ignored) {
            // the connection is closed instead of reused
        }
        response.close();
    }

    private static void notify(Runnable event) {
        try {
            event.run();
        } catch (RuntimeException ignored) {
            // a listener must not break a request
        }
    }

    /** Drains a retried answer so that its connection can be reused. */
    private static final class OutputStreamSink extends java.io.OutputStream {
        static final OutputStreamSink INSTANCE = new OutputStreamSink();

        @Override
        public void write(int b) {}

        @Override
        public void write(byte[] b, int off, int len) {}
    }

    /** A 422 answer whose body was read to classify it, handed on with the same bytes. */
    private static final class BufferedResponse implements ClientHttpResponse {
        private final ClientHttpResponse delegate;
        private final byte[] body;

        BufferedResponse(ClientHttpResponse delegate, byte[] body) {
            this.delegate = delegate;
            this.body = body;
        }

        @Override
        public HttpStatusCode getStatusCode() throws IOException {
            return delegate.getStatusCode();
        }

        @Override
        public String getStatusText() throws IOException {
            return delegate.getStatusText();
        }

        @Override
        public HttpHeaders getHeaders() {
            return delegate.getHeaders();
        }

        @Override
        public InputStream getBody() {
            return new ByteArrayInputStream(body);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    /** Validating builder. */
    public static final class Builder {
        private RetryPolicy policy = RetryPolicy.ofDefaults();
        private InstantSource clock = InstantSource.system();
        private RandomGenerator random = () -> ThreadLocalRandom.current().nextLong();
        private Sleeper sleeper = Sleeper.THREAD_SLEEP;
        private IdempotentClientListener listener = IdempotentClientListener.NOOP;

        private Builder() {}

        public Builder policy(RetryPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The jitter's source; it must be safe for use by several threads (the default is). */
        public Builder random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
            return this;
        }

        /** Sees every attempt; answers are reported without their body (the adapter does not read it). */
        public Builder listener(IdempotentClientListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        public IdempotencyRetryInterceptor build() {
            return new IdempotencyRetryInterceptor(this);
        }
    }
}
