package dev.exactly.idempotency.client;

import dev.exactly.idempotency.client.internal.Randoms;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * Sends a logical request with its idempotency key and retries it by the {@link RetryPolicy}, on the JDK's
 * {@link HttpClient}: every attempt carries the same key and the same body bytes; the key is never
 * regenerated here. Thread-safe; blocking (use virtual threads for many requests at once).
 *
 * <pre>{@code
 * IdempotentHttpClient client = IdempotentHttpClient.create(HttpClient.newHttpClient());
 * String key = IdempotencyKeys.derive("checkout", userId, orderId);
 * IdempotentResponse answer = client.send(IdempotentRequest.postJson(uri, body), key);
 * }</pre>
 *
 * <ul>
 *   <li>a final answer (2xx, 3xx, 4xx other than the retryable ones, 500, ...) is returned as an
 *       {@link IdempotentResponse}, with the attempts it took and whether it was a replay;</li>
 *   <li>422 {@code idempotency-key-reused} is an {@link IdempotencyKeyReusedException}, never retried;</li>
 *   <li>a final answer whose body is larger than {@link Builder#maxAnswerBytes} (16 MiB by default) is an
 *       {@link AnswerTooLargeException} carrying its status and headers; the body is not read past the limit
 *       (a retryable status with such a body is retried as the status says);</li>
 *   <li>when the attempts or the deadline run out, {@link RetriesExhaustedException}: the outcome is
 *       unknown, and the caller retries later with the same key.</li>
 * </ul>
 */
public final class IdempotentHttpClient {
    private final HttpClient http;
    private final RetryPolicy policy;
    private final InstantSource clock;
    private final RandomGenerator random;
    private final Sleeper sleeper;
    private final IdempotentClientListener listener;
    private final int maxAnswerBytes;

    private IdempotentHttpClient(Builder b) {
        this.http = b.http;
        this.policy = b.policy;
        this.clock = b.clock;
        this.random = b.random;
        this.sleeper = b.sleeper;
        this.listener = b.listener;
        this.maxAnswerBytes = b.maxAnswerBytes;
    }

    /** A client with the default {@link RetryPolicy}, the system clock and real sleeping. */
    public static IdempotentHttpClient create(HttpClient http) {
        return builder(http).build();
    }

    /** A builder on {@code http} (which keeps its own connect timeout, proxy, TLS and version settings). */
    public static Builder builder(HttpClient http) {
        return new Builder(http);
    }

    public RetryPolicy policy() {
        return policy;
    }

    /**
     * Sends {@code request} with {@code key} until a final answer, within the policy's attempts and
     * deadline.
     *
     * @return the final answer
     * @throws IdempotencyKeyReusedException the server says the key was used with a different request
     * @throws RetriesExhaustedException     no final answer within the attempts and the deadline
     * @throws InterruptedException          the thread was interrupted while waiting
     */
    public IdempotentResponse send(IdempotentRequest request, String key) throws InterruptedException {
        Objects.requireNonNull(request, "request");
        IdempotencyKeys.requireValid(key);
        RetrySequence retries = RetrySequence.start(policy, clock, random);
        while (true) {
            Duration timeout = retries.beginAttempt();
            IdempotentClientListener.Attempt attempt =
                    new IdempotentClientListener.Attempt(key, retries.attempts(), request.target(retries.attempts()));
            notify(() -> listener.attemptStarted(attempt));
            IdempotentResponse answer = null;
            IOException failure = null;
            RetryDecision decision;
            try {
                HttpResponse<byte[]> response = exchange(httpRequest(request, key, attempt, timeout), timeout);
                byte[] body = response.body() == null ? new byte[0] : response.body();
                notify(() -> listener.attemptAnswered(attempt, response.statusCode(), response.headers(), body));
                answer = new IdempotentResponse(
                        response.statusCode(),
                        response.headers(),
                        body,
                        key,
                        attempt.number(),
                        IdempotentResponse.isReplay(response.headers()),
                        attempt.target());
                if (IdempotencyKeyReusedException.isKeyReused(answer.status(), body)) {
                    throw new IdempotencyKeyReusedException(answer);
                }
                decision = retries.afterAnswer(
                        answer.status(),
                        response.headers().firstValue("Retry-After").orElse(null),
                        answer.replayed());
            } catch (BoundedBody.TooLarge e) {
                // the status is known, the body is not: a retryable status is retried, any other one is the outcome
                notify(() -> listener.attemptFailed(attempt, e));
                decision = retries.afterAnswer(
                        e.status(),
                        e.headers().firstValue("Retry-After").orElse(null),
                        IdempotentResponse.isReplay(e.headers()));
                if (decision instanceof RetryDecision.Final) {
                    throw new AnswerTooLargeException(
                            key, e.status(), e.headers(), maxAnswerBytes, retries.attempts(), attempt.target());
                }
                failure = e;
            } catch (IOException e) {
                IOException error = e;
                failure = e;
                notify(() -> listener.attemptFailed(attempt, error));
                decision = retries.afterFailure(e);
            }
            switch (decision) {
                case RetryDecision.Final f -> {
                    return Objects.requireNonNull(answer, "a final decision follows an answer");
                }
                case RetryDecision.Retry retry -> {
                    notify(() -> listener.retryScheduled(attempt, retry.delay(), retry.retryAfter()));
                    sleeper.sleep(retry.delay());
                }
                case RetryDecision.GiveUp giveUp ->
                    throw new RetriesExhaustedException(
                            key, giveUp, retries.attempts(), retries.mayHaveExecuted(), answer, failure);
            }
        }
    }

    /**
     * One attempt, its whole answer within {@code timeout}: the request's own timeout ends at the answer's
     * head, and a server that sends the head and then stalls the body would hold the caller past every
     * deadline. The exchange is cancelled when the time is up.
     */
    private HttpResponse<byte[]> exchange(HttpRequest request, Duration timeout)
            throws IOException, InterruptedException {
        CompletableFuture<HttpResponse<byte[]>> answer = http.sendAsync(request, BoundedBody.handler(maxAnswerBytes));
        try {
            return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            answer.cancel(true);
            throw new HttpTimeoutException("no complete answer within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            answer.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IOException(cause);
        }
    }

    private static HttpRequest httpRequest(
            IdempotentRequest request, String key, IdempotentClientListener.Attempt attempt, Duration timeout) {
        HttpRequest.Builder b = HttpRequest.newBuilder(attempt.target())
                .timeout(timeout)
                .method(
                        request.method(),
                        request.bodyLength() == 0 && !hasBody(request.method())
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(request.body()));
        request.headers().forEach((name, values) -> values.forEach(v -> b.header(name, v)));
        b.header(IdempotencyKeys.HEADER, key);
        return b.build();
    }

    private static boolean hasBody(String method) {
        return method.equals("POST") || method.equals("PUT") || method.equals("PATCH");
    }

    private static void notify(Runnable event) {
        try {
            event.run();
        } catch (RuntimeException ignored) {
            // a listener must not break a request
        }
    }

    /** Validating builder. */
    public static final class Builder {
        /** The default of {@link #maxAnswerBytes}: 16 MiB. */
        public static final int DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024;

        private final HttpClient http;
        private RetryPolicy policy = RetryPolicy.ofDefaults();
        private InstantSource clock = InstantSource.system();
        private RandomGenerator random = Randoms.threadLocal();
        private Sleeper sleeper = Sleeper.THREAD_SLEEP;
        private IdempotentClientListener listener = IdempotentClientListener.NOOP;
        private int maxAnswerBytes = DEFAULT_MAX_ANSWER_BYTES;

        private Builder(HttpClient http) {
            this.http = Objects.requireNonNull(http, "http");
        }

        public Builder policy(RetryPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** The clock of the deadline and of {@code Retry-After} dates. */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The jitter's source; it must be safe for use by several threads (the default is). */
        public Builder random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        /** How the pauses between attempts are taken. */
        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
            return this;
        }

        public Builder listener(@Nullable IdempotentClientListener listener) {
            this.listener = listener == null ? IdempotentClientListener.NOOP : listener;
            return this;
        }

        /**
         * The largest answer body kept in memory, in bytes (default {@value #DEFAULT_MAX_ANSWER_BYTES}, 16 MiB). A
         * body that declares more, or grows past it, is not read further and the connection is closed: a final
         * answer is then an {@link AnswerTooLargeException}, so that a server or a proxy in between cannot
         * exhaust the caller's memory.
         */
        public Builder maxAnswerBytes(int maxAnswerBytes) {
            if (maxAnswerBytes < 1) {
                throw new IllegalArgumentException("maxAnswerBytes must be positive, got " + maxAnswerBytes);
            }
            this.maxAnswerBytes = maxAnswerBytes;
            return this;
        }

        public IdempotentHttpClient build() {
            return new IdempotentHttpClient(this);
        }
    }
}
