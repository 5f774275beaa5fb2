package dev.exactly.idempotency.spring.boot.observation;

import dev.exactly.idempotency.ExecutionInterceptor;
import dev.exactly.idempotency.IdempotencyException;
import dev.exactly.idempotency.IdempotencyKeyReusedException;
import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.LeaseLostException;
import dev.exactly.idempotency.RequestInFlightException;
import dev.exactly.idempotency.StoreUnavailableException;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Makes each guarded execution a Micrometer {@link Observation} named {@code exactly.idempotency}: started
 * before the claim and stopped after the recording or release, current (in scope) while the action runs,
 * so that the action's own spans are its children. With tracing on it is a span; with Micrometer's meter
 * handler (Spring Boot's default with Actuator) a timer {@code exactly.idempotency} tagged {@code route},
 * {@code method} and {@code outcome}. The engine's events become the observation's events: {@code claim},
 * {@code takeover}, {@code wait}, {@code replay}, {@code lease.lost} (and {@code mismatch},
 * {@code conflict}); the counters of {@code MicrometerIdempotencyListener} are kept as they are.
 *
 * <p>Register it with the engine both as its {@link ExecutionInterceptor} and as a listener.
 */
public final class ObservingIdempotencyListener implements IdempotencyListener, ExecutionInterceptor {
    /** The events (their names are what a span shows). */
    public static final Observation.Event CLAIM = Observation.Event.of("claim");

    public static final Observation.Event TAKEOVER = Observation.Event.of("takeover");
    public static final Observation.Event WAIT = Observation.Event.of("wait");
    public static final Observation.Event REPLAY = Observation.Event.of("replay");
    public static final Observation.Event LEASE_LOST = Observation.Event.of("lease.lost");
    public static final Observation.Event MISMATCH = Observation.Event.of("mismatch");
    public static final Observation.Event CONFLICT = Observation.Event.of("conflict");

    private final ObservationRegistry registry;
    private final IdempotencyObservationConvention convention;
    private final Map<Running, Observation> running = new ConcurrentHashMap<>();

    public ObservingIdempotencyListener(ObservationRegistry registry, IdempotencyObservationConvention convention) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.convention = Objects.requireNonNull(convention, "convention");
    }

    /** A request by identity: two equal requests running at once are two executions. */
    private record Running(IdempotencyRequest request) {
        @Override
        @SuppressWarnings("ReferenceEquality") // identity, on purpose (above)
        public boolean equals(Object other) {
            return other instanceof Running r && r.request == request;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(request);
        }
    }

    @Override
    public IdempotentResult intercept(IdempotencyRequest request, Execution execution) throws Exception {
        IdempotencyObservationContext context = new IdempotencyObservationContext(request);
        Observation observation = Observation.createNotStarted(convention, () -> context, registry);
        if (observation.isNoop()) {
            return execution.proceed();
        }
        Running key = new Running(request);
        observation.start();
        running.put(key, observation);
        try (Observation.Scope scope = observation.openScope()) {
            IdempotentResult result = execution.proceed();
            context.outcome(result.kind().name().toLowerCase(Locale.ROOT));
            return result;
        } catch (Exception | Error failure) {
            context.outcome(outcome(failure));
            if (!(failure instanceof IdempotencyException)) {
                observation.error(failure);
            }
            throw failure;
        } finally {
            running.remove(key);
            observation.stop();
        }
    }

    private static String outcome(Throwable failure) {
        return switch (failure) {
            case RequestInFlightException inFlight -> "conflict";
            case IdempotencyKeyReusedException reused -> "mismatch";
            case LeaseLostException lost -> "lease_lost";
            case StoreUnavailableException unavailable -> "store_unavailable";
            case IdempotencyException refused -> "invalid";
            default -> "error";
        };
    }

    private void event(IdempotencyRequest request, Observation.Event event) {
        Observation observation = running.get(new Running(request));
        if (observation != null) {
            observation.event(event);
        }
    }

    @Override
    public void onClaim(IdempotencyRequest request, boolean takeover) {
        event(request, takeover ? TAKEOVER : CLAIM);
    }

    @Override
    public void onWait(IdempotencyRequest request, Duration waited, WaitResult result) {
        event(request, WAIT);
    }

    @Override
    public void onReplay(IdempotencyRequest request, IdempotencyRecord record) {
        event(request, REPLAY);
    }

    @Override
    public void onMismatch(IdempotencyRequest request, IdempotencyRecord record) {
        event(request, MISMATCH);
    }

    @Override
    public void onConflict(IdempotencyRequest request, boolean waited) {
        event(request, CONFLICT);
    }

    @Override
    public void onLeaseLost(IdempotencyRequest request, Duration held) {
        event(request, LEASE_LOST);
    }

    @Override
    public void onRenewal(IdempotencyRequest request, RenewalResult result) {
        if (result == RenewalResult.LOST) {
            event(request, LEASE_LOST);
        }
    }

    @Override
    public String toString() {
        return "ObservingIdempotencyListener[" + running.size() + " running]";
    }
}
