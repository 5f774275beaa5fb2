package dev.exactly.idempotency.spring.boot.metrics;

import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.CLAIMS;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.CONFLICTS;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.LEASE_HOLD;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.LEASE_LOST;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.LOCK_FAILURE_RATIO;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.MAX_HOLD;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.MISMATCHES;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.RENEWALS;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.RENEWAL_FAILURES;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.REPLAYS;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.STORE_ERRORS;
import static dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener.WAITS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKeyReusedException;
import dev.exactly.idempotency.IdempotencyListener.RenewalResult;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.LeaseLostException;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.RequestInFlightException;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spring.boot.EngineCalls;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Each engine event moves exactly its meter, tagged by route and method only. The engine runs on the
 * in-memory store with a hand-moved clock, so that takeovers and lost leases happen on purpose.
 */
class MicrometerIdempotencyListenerTest {
    private static final String ROUTE = "/v1/charges";
    private static final String SECRET_KEY = "key-that-must-never-be-a-tag";
    private static final String TENANT = "tenant-that-must-never-be-a-tag";

    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));
    private final InstantSource clock = now::get;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** The meters whose configuration asks for histogram buckets (a Prometheus registry would publish them). */
    private final Set<String> histogramRequested = recordHistograms(registry);

    private final IdempotencyEngine engine = IdempotencyEngine.builder(InMemoryIdempotencyStore.create(clock, 100))
            .clock(clock)
            .listener(new MicrometerIdempotencyListener(registry))
            .build();

    @Test
    void claimsReplaysMismatchesAndHoldTimes() throws Exception {
        engine.execute(request(SECRET_KEY, "{\"a\":1}"), lease -> {
            advance(Duration.ofMillis(250));
            return Outcome.complete(response(201));
        });
        engine.execute(request(SECRET_KEY, "{\"a\":1}"), lease -> Outcome.complete(response(201)));
        assertThatThrownBy(() ->
                        engine.execute(request(SECRET_KEY, "{\"a\":2}"), lease -> Outcome.complete(response(201))))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        engine.execute(request("declined", "{}"), lease -> Outcome.fail(response(402)));
        engine.execute(request("declined", "{}"), lease -> Outcome.complete(response(201)));

        assertThat(counter(CLAIMS, Tag.of("takeover", "false"))).isEqualTo(2);
        assertThat(counter(CLAIMS, Tag.of("takeover", "true"))).isZero();
        assertThat(counter(REPLAYS, Tag.of("outcome", "completed"))).isEqualTo(1);
        assertThat(counter(REPLAYS, Tag.of("outcome", "failed"))).isEqualTo(1);
        assertThat(counter(MISMATCHES)).isEqualTo(1);
        Timer completed = timer(LEASE_HOLD, Tag.of("outcome", "completed"));
        assertThat(completed.count()).isEqualTo(1);
        assertThat(completed.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(250);
        assertThat(timer(LEASE_HOLD, Tag.of("outcome", "failed")).count()).isEqualTo(1);
        // percentiles and histogram buckets are published for the hold time
        assertThat(completed.takeSnapshot().percentileValues())
                .extracting(v -> v.percentile())
                .containsExactly(0.5, 0.95, 0.99);
        assertThat(registry.find(LEASE_HOLD + ".percentile").tag("phi", "0.99").gauges())
                .isNotEmpty();
        assertThat(histogramRequested).contains(LEASE_HOLD);
        assertNoKeyOrTenantInTags();
    }

    @Test
    void conflictsAndTheLockFailureRatio() throws Exception {
        engine.execute(request(SECRET_KEY, "{}"), lease -> {
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() ->
                                engine.execute(request(SECRET_KEY, "{}"), inner -> Outcome.complete(response(201))))
                        .isInstanceOf(RequestInFlightException.class);
            }
            return Outcome.complete(response(201));
        });
        assertThat(counter(CONFLICTS, Tag.of("waited", "false"))).isEqualTo(3);
        assertThat(counter(CONFLICTS, Tag.of("waited", "true"))).isZero();
        assertThat(registry.get(LOCK_FAILURE_RATIO).tag("route", ROUTE).gauge().value())
                .isEqualTo(0.75);
    }

    @Test
    void aWaitThatTimesOutIsTimedAndCountedAsAConflictAfterWaiting() throws Exception {
        SimpleMeterRegistry waits = new SimpleMeterRegistry();
        IdempotencyEngine realTime = IdempotencyEngine.builder(InMemoryIdempotencyStore.create())
                .listener(new MicrometerIdempotencyListener(waits))
                .build();
        IdempotencyPolicy wait = IdempotencyPolicy.custom()
                .inFlight(InFlightPolicy.waitUpTo(Duration.ofMillis(50)))
                .build();
        realTime.execute(request(SECRET_KEY, "{}"), lease -> {
            assertThatThrownBy(() ->
                            realTime.execute(request(SECRET_KEY, "{}", wait), inner -> Outcome.complete(response(201))))
                    .isInstanceOf(RequestInFlightException.class);
            return Outcome.complete(response(201));
        });
        Timer timedOut = waits.get(WAITS)
                .tags("route", ROUTE, "method", "POST", "result", "timed_out")
                .timer();
        assertThat(timedOut.count()).isEqualTo(1);
        assertThat(timedOut.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(50);
        assertThat(waits.get(CONFLICTS)
                        .tags("route", ROUTE, "waited", "true")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void aTakeoverAndTheLeaseItsFormerOwnerLost() throws Exception {
        IdempotencyPolicy shortLease =
                IdempotencyPolicy.custom().lease(Duration.ofSeconds(1)).build();
        assertThatThrownBy(() -> engine.execute(request(SECRET_KEY, "{}", shortLease), lease -> {
                    advance(Duration.ofSeconds(2)); // a GC pause past the lease: a retry takes the key over
                    engine.execute(request(SECRET_KEY, "{}", shortLease), retry -> Outcome.complete(response(201)));
                    return Outcome.complete(response(201));
                }))
                .isInstanceOf(LeaseLostException.class);

        assertThat(counter(CLAIMS, Tag.of("takeover", "true"))).isEqualTo(1);
        assertThat(counter(CLAIMS, Tag.of("takeover", "false"))).isEqualTo(1);
        assertThat(counter(LEASE_LOST)).isEqualTo(1);
        assertThat(timer(LEASE_HOLD, Tag.of("outcome", "lost")).totalTime(TimeUnit.SECONDS))
                .isEqualTo(2);
    }

    @Test
    void renewalsFailedRenewalsAndTheMaxHoldAreCounted() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        MicrometerIdempotencyListener listener = new MicrometerIdempotencyListener(meters);
        IdempotencyEngine realTime = IdempotencyEngine.builder(InMemoryIdempotencyStore.create())
                .listener(listener)
                .build();
        IdempotencyPolicy kept = IdempotencyPolicy.custom()
                .lease(Duration.ofMillis(300))
                .keepAlive(KeepAlive.upTo(Duration.ofMillis(900)))
                .build();
        realTime.execute(request(SECRET_KEY, "{}", kept), lease -> {
            // the keep-alive renews the lease until its max hold, then stops
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> meters.find(MAX_HOLD).counter() != null
                            && meters.get(MAX_HOLD)
                                            .tag("route", ROUTE)
                                            .counter()
                                            .count()
                                    == 1);
            return Outcome.complete(response(201));
        });
        assertThat(meters.get(RENEWALS)
                        .tags("route", ROUTE, "method", "POST")
                        .counter()
                        .count())
                .isGreaterThanOrEqualTo(2);
        listener.onRenewal(request("other", "{}"), RenewalResult.LOST);
        listener.onRenewal(request("other", "{}"), RenewalResult.FAILED);
        listener.onRenewal(request("other", "{}"), RenewalResult.FAILED);
        assertThat(meters.get(RENEWAL_FAILURES)
                        .tags("route", ROUTE, "reason", "lost")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(meters.get(RENEWAL_FAILURES)
                        .tags("route", ROUTE, "reason", "store_error")
                        .counter()
                        .count())
                .isEqualTo(2);
        for (Meter meter : meters.getMeters()) {
            assertThat(meter.getId().getTags()).extracting(Tag::getValue).doesNotContain(SECRET_KEY, TENANT);
        }
    }

    @Test
    void aReleaseIsAHoldWithOutcomeReleased() {
        assertThatThrownBy(() -> engine.execute(request(SECRET_KEY, "{}"), lease -> {
                    throw new IllegalStateException("no side effect happened");
                }))
                .isInstanceOf(IllegalStateException.class);
        assertThat(timer(LEASE_HOLD, Tag.of("outcome", "released")).count()).isEqualTo(1);
    }

    @Test
    void storeErrorsAreTaggedByWhatFailed() {
        IdempotencyEngine down = IdempotencyEngine.builder(new DownStore())
                .listener(new MicrometerIdempotencyListener(registry))
                .build();
        assertThatThrownBy(() -> down.execute(request(SECRET_KEY, "{}"), lease -> Outcome.complete(response(201))))
                .isInstanceOf(StoreUnavailableException.class);
        assertThat(counter(STORE_ERRORS, Tag.of("exception", "ConnectException")))
                .isEqualTo(1);
        assertThat(MicrometerIdempotencyListener.exceptionType(new IllegalStateException()))
                .isEqualTo("IllegalStateException");
        assertNoKeyOrTenantInTags();
    }

    private void assertNoKeyOrTenantInTags() {
        for (Meter meter : registry.getMeters()) {
            assertThat(meter.getId().getName()).startsWith("exactly.idempotency.");
            assertThat(meter.getId().getTags())
                    .extracting(Tag::getValue)
                    .noneMatch(v -> v.contains(SECRET_KEY) || v.contains(TENANT) || v.contains("declined"));
            assertThat(meter.getId().getTag("route")).isEqualTo(ROUTE);
            assertThat(meter.getId().getTag("method")).isEqualTo("POST");
        }
    }

    private static Set<String> recordHistograms(SimpleMeterRegistry registry) {
        Set<String> names = ConcurrentHashMap.newKeySet();
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                if (Boolean.TRUE.equals(config.isPercentileHistogram())) {
                    names.add(id.getName());
                }
                return config;
            }
        });
        return names;
    }

    private void advance(Duration duration) {
        now.updateAndGet(t -> t.plus(duration));
    }

    private double counter(String name, Tag... tags) {
        return registry.get(name)
                .tags("route", ROUTE, "method", "POST")
                .tags(List.of(tags))
                .counter()
                .count();
    }

    private Timer timer(String name, Tag tag) {
        return registry.get(name)
                .tags("route", ROUTE, "method", "POST")
                .tags(List.of(tag))
                .timer();
    }

    private static IdempotencyRequest request(String key, String body) {
        return request(key, body, IdempotencyPolicy.ofDefaults());
    }

    private static IdempotencyRequest request(String key, String body, IdempotencyPolicy policy) {
        return EngineCalls.request(TENANT, ROUTE, key, body, policy);
    }

    private static StoredResponse response(int status) {
        return EngineCalls.response(status);
    }

    /** A store whose server refuses connections. */
    private static final class DownStore implements IdempotencyStore {
        private static StoreUnavailableException down() {
            return new StoreUnavailableException("connection refused", new ConnectException("refused"));
        }

        @Override
        public ClaimOutcome claim(
                ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
            throw down();
        }

        @Override
        public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
            throw down();
        }

        @Override
        public boolean release(ScopeKey key, OwnerToken owner) {
            throw down();
        }

        @Override
        public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
            throw down();
        }

        @Override
        public Optional<IdempotencyRecord> find(ScopeKey key) {
            throw down();
        }

        @Override
        public ChangeSubscription subscribe(ScopeKey key) {
            throw down();
        }
    }
}
