package dev.exactly.idempotency.spring.boot.observation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.LeaseLostException;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.ChangeSubscription;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The engine's events become the span's: wait, takeover and lease loss, with the outcome each execution ended in. */
class ObservationEventsTest {
    /** A thread per task: the common pool may have a single worker, which a held request would block. */
    private static final java.util.concurrent.Executor THREADS =
            java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();

    private final SimpleTracer tracer = new SimpleTracer();
    private final ObservingIdempotencyListener observing;

    ObservationEventsTest() {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultTracingObservationHandler(tracer));
        observing = new ObservingIdempotencyListener(registry, IdempotencyObservationConvention.DEFAULT);
    }

    private IdempotencyEngine engine(IdempotencyStore store) {
        return IdempotencyEngine.builder(store)
                .listener(observing)
                .interceptor(observing)
                .build();
    }

    private static IdempotencyRequest request(IdempotencyPolicy policy) {
        return IdempotencyRequest.of(
                new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("k1")),
                new Fingerprint("sha256-raw", "f"),
                policy);
    }

    private static List<String> events(SimpleSpan span) {
        return span.getEvents().stream().map(Map.Entry::getValue).toList();
    }

    private SimpleSpan span(String outcome) {
        return tracer.getSpans().stream()
                .filter(s -> outcome.equals(s.getTags().get("outcome")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no span with outcome " + outcome + ": " + tracer.getSpans()));
    }

    private static void run(IdempotencyEngine engine, IdempotencyRequest request, CountDownLatch finish) {
        try {
            engine.execute(request, lease -> {
                finish.await(10, TimeUnit.SECONDS);
                return Outcome.complete(StoredResponse.of(201, new byte[0]));
            });
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aCoalescedRequestWaitsAndReplays() throws Exception {
        CountDownLatch subscribed = new CountDownLatch(1);
        IdempotencyStore store = new ForwardingIdempotencyStore(InMemoryIdempotencyStore.create()) {
            @Override
            public ChangeSubscription subscribe(ScopeKey key) {
                ChangeSubscription subscription = super.subscribe(key);
                subscribed.countDown();
                return subscription;
            }
        };
        IdempotencyEngine engine = engine(store);
        IdempotencyPolicy waiting = IdempotencyPolicy.custom()
                .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(10)))
                .build();
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Void> first =
                CompletableFuture.runAsync(() -> run(engine, request(waiting), finish), THREADS);
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> store.find(request(waiting).key()).isPresent());
        CompletableFuture<Void> second =
                CompletableFuture.runAsync(() -> run(engine, request(waiting), new CountDownLatch(0)), THREADS);
        assertThat(subscribed.await(10, TimeUnit.SECONDS))
                .as("the second request waits")
                .isTrue();
        finish.countDown();
        first.get(10, TimeUnit.SECONDS);
        second.get(10, TimeUnit.SECONDS);

        assertThat(events(span("executed"))).containsExactly("claim");
        assertThat(events(span("replayed"))).containsExactly("wait", "replay");
    }

    @Test
    void anExpiredLeaseIsTakenOverAndAnOwnerWhoseWriteIsRefusedLostIt() throws Exception {
        AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T10:00:00Z"));
        InMemoryIdempotencyStore memory =
                InMemoryIdempotencyStore.builder().clock(now::get).build();
        IdempotencyPolicy shortLease = IdempotencyPolicy.custom()
                .lease(Duration.ofSeconds(1))
                .keepAlive(KeepAlive.disabled())
                .build();
        ScopeKey key = request(shortLease).key();
        // a first owner claimed and died: its lease runs out, and a retry takes the key over
        ClaimOutcome.Claimed dead = (ClaimOutcome.Claimed)
                memory.claim(key, new Fingerprint("sha256-raw", "f"), Duration.ofSeconds(1), Duration.ofHours(1));
        now.set(now.get().plusSeconds(5));
        engine(memory).execute(request(shortLease), lease -> Outcome.complete(StoredResponse.of(201, new byte[0])));
        assertThat(memory.complete(key, dead.owner(), RecordStatus.COMPLETED, StoredResponse.of(500, new byte[0])))
                .isFalse();

        IdempotencyStore taken = new ForwardingIdempotencyStore(InMemoryIdempotencyStore.create()) {
            @Override
            public boolean complete(
                    ScopeKey scopeKey, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
                return false; // another request took the key over meanwhile
            }
        };
        assertThatThrownBy(() -> engine(taken)
                        .execute(request(shortLease), lease -> Outcome.complete(StoredResponse.of(201, new byte[0]))))
                .isInstanceOf(LeaseLostException.class);

        assertThat(events(span("executed"))).containsExactly("takeover");
        assertThat(events(span("lease_lost"))).containsExactly("claim", "lease.lost");
    }
}
