package dev.exactly.idempotency.client.spring;

import dev.exactly.idempotency.client.IdempotencyClientException;
import dev.exactly.idempotency.client.IdempotencyKeyReusedException;
import dev.exactly.idempotency.client.IdempotencyKeys;
import dev.exactly.idempotency.client.IdempotentClientListener;
import dev.exactly.idempotency.client.IdempotentResponse;
import dev.exactly.idempotency.client.RetriesExhaustedException;
import dev.exactly.idempotency.client.RetryDecision;
import dev.exactly.idempotency.client.RetryPolicy;
import dev.exactly.idempotency.client.RetrySequence;
import java.io.IOException;
import java.net.http.HttpTimeoutException;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Retries {@code WebClient} requests that carry an {@code Idempotency-Key}, by the same rules as
 * {@link dev.exactly.idempotency.client.IdempotentHttpClient}: the same key and the same body bytes on
 * every attempt (the first attempt's bytes are recorded and replayed); connection errors, timeouts, 409,
 * 429, 502-504 retried with capped exponential backoff and full jitter, {@code Retry-After} honoured within
 * the deadline; every other answer passed on; 422 {@code idempotency-key-reused} as
 * {@link IdempotencyKeyReusedException}; attempts or deadline used up as {@link RetriesExhaustedException}.
 * Each attempt waits for its answer's headers at most the policy's attempt timeout (cut to the deadline).
 * A request without a key goes out once, untouched. The sequence starts at each subscription.
 *
 * <pre>{@code
 * WebClient payments = WebClient.builder().baseUrl(base).filter(IdempotencyRetryFilter.create()).build();
 * }</pre>
 */
public final class IdempotencyRetryFilter implements ExchangeFilterFunction {
    private final RetryPolicy policy;
    private final InstantSource clock;
    private final RandomGenerator random;
    private final Scheduler scheduler;
    private final IdempotentClientListener listener;

    private IdempotencyRetryFilter(Builder b) {
        this.policy = b.policy;
        this.clock = b.clock;
        this.random = b.random;
        this.scheduler = b.scheduler;
        this.listener = b.listener;
    }

    /** With the default {@link RetryPolicy}, pausing on Reactor's parallel scheduler. */
    public static IdempotencyRetryFilter create() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        String key = request.headers().getFirst(IdempotencyKeys.HEADER);
        if (key == null) {
            return next.exchange(request);
        }
        IdempotencyKeys.requireValid(key);
        ClientRequest replayable = ClientRequest.from(request)
                .body(new ReplayableBody(request.body()))
                .build();
        return Mono.defer(() -> attempt(replayable, next, key, RetrySequence.start(policy, clock, random)));
    }

    private Mono<ClientResponse> attempt(
            ClientRequest request, ExchangeFunction next, String key, RetrySequence retries) {
        var timeout = retries.beginAttempt();
        IdempotentClientListener.Attempt attempt =
                new IdempotentClientListener.Attempt(key, retries.attempts(), request.url());
        notify(() -> listener.attemptStarted(attempt));
        return next.exchange(request)
                .timeout(timeout, Schedulers.parallel())
                .flatMap(response -> answered(request, next, key, retries, attempt, response))
                // only this attempt's own failures: a later attempt runs inside this one's flatMap, and its
                // outcome (a RetriesExhaustedException over an I/O failure, say) is already decided
                .onErrorResume(e -> !(e instanceof IdempotencyClientException) && ioFailure(e) != null, e -> {
                    IOException failure = Objects.requireNonNull(ioFailure(e));
                    notify(() -> listener.attemptFailed(attempt, failure));
                    return decide(request, next, key, retries, attempt, retries.afterFailure(failure), null, failure);
                });
    }

    private Mono<ClientResponse> answered(
            ClientRequest request,
            ExchangeFunction next,
            String key,
            RetrySequence retries,
            IdempotentClientListener.Attempt attempt,
            ClientResponse response) {
        int status = response.statusCode().value();
        HttpHeaders headers = response.headers().asHttpHeaders();
        notify(() -> listener.attemptAnswered(attempt, status, SpringAnswers.headers(headers), new byte[0]));
        if (status == 422) {
            return response.bodyToMono(byte[].class)
                    .timeout(retries.attemptTimeout(), Schedulers.parallel())
                    .defaultIfEmpty(new byte[0])
                    .flatMap(body -> {
                        if (IdempotencyKeyReusedException.isKeyReused(status, body)) {
                            return Mono.error(new IdempotencyKeyReusedException(
                                    SpringAnswers.answer(status, headers, body, key, attempt.number(), request.url())));
                        }
                        return Mono.just(response.mutate()
                                .body(Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body)))
                                .build());
                    });
        }
        RetryDecision decision = retries.afterAnswer(
                status,
                headers.getFirst(HttpHeaders.RETRY_AFTER),
                IdempotentResponse.isReplay(SpringAnswers.headers(headers)));
        if (decision instanceof RetryDecision.Final) {
            return Mono.just(response);
        }
        return response.bodyToMono(byte[].class)
                .timeout(retries.attemptTimeout(), Schedulers.parallel())
                .defaultIfEmpty(new byte[0])
                .flatMap(body -> decide(
                        request,
                        next,
                        key,
                        retries,
                        attempt,
                        decision,
                        SpringAnswers.answer(status, headers, body, key, attempt.number(), request.url()),
                        null));
    }

    private Mono<ClientResponse> decide(
            ClientRequest request,
            ExchangeFunction next,
            String key,
            RetrySequence retries,
            IdempotentClientListener.Attempt attempt,
            RetryDecision decision,
            @Nullable IdempotentResponse answer,
            @Nullable IOException failure) {
        return switch (decision) {
            case RetryDecision.Final f ->
                Mono.error(new IllegalStateException("a final answer is passed on, not decided"));
            case RetryDecision.Retry retry -> {
                notify(() -> listener.retryScheduled(attempt, retry.delay(), retry.retryAfter()));
                yield Mono.delay(retry.delay(), scheduler).then(Mono.defer(() -> attempt(request, next, key, retries)));
            }
            case RetryDecision.GiveUp giveUp ->
                Mono.error(new RetriesExhaustedException(
                        key, giveUp, retries.attempts(), retries.mayHaveExecuted(), answer, failure));
        };
    }

    /** The I/O failure behind an exchange error (connection refused or lost, or the attempt's timeout), or null. */
    @SuppressWarnings("ReferenceEquality") // identity: a throwable that is its own cause ends the walk
    private static @Nullable IOException ioFailure(Throwable error) {
        if (error instanceof TimeoutException) {
            return new HttpTimeoutException("no answer within the attempt timeout");
        }
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof IOException io) {
                return io;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
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
        private RetryPolicy policy = RetryPolicy.ofDefaults();
        private InstantSource clock = InstantSource.system();
        private RandomGenerator random = () -> ThreadLocalRandom.current().nextLong();
        private Scheduler scheduler = Schedulers.parallel();
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

        /** Where the pauses between attempts are scheduled (the attempt timeouts run on Reactor's parallel scheduler). */
        public Builder scheduler(Scheduler scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** Sees every attempt; answers are reported without their body. */
        public Builder listener(IdempotentClientListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        public IdempotencyRetryFilter build() {
            return new IdempotencyRetryFilter(this);
        }
    }
}
