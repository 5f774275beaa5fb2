package dev.exactly.idempotency.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.servlet.Call;
import dev.exactly.idempotency.servlet.ForwardingStore;
import dev.exactly.idempotency.servlet.HttpContract;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.spi.ChangeSubscription;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * No store call runs on an event-loop thread: every claim, find, wait, completion and renewal of a request
 * (executed, replayed, coalesced, refused) is made on a worker, while the requests are served by Reactor
 * Netty's event loops.
 */
class EventLoopTest {

    /** Records, for every store call, the thread and whether it was one of the non-blocking event loops. */
    static final class WatchedStore extends ForwardingStore {
        final List<String> calls = new CopyOnWriteArrayList<>();
        final List<String> onEventLoop = new CopyOnWriteArrayList<>();

        WatchedStore() {
            super(InMemoryIdempotencyStore.create());
        }

        private void watch(String call) {
            calls.add(call + " on " + Thread.currentThread());
            if (Thread.currentThread() instanceof reactor.core.scheduler.NonBlocking
                    || Thread.currentThread().getName().contains("reactor-http")) {
                onEventLoop.add(call + " on " + Thread.currentThread());
            }
        }

        @Override
        public ClaimOutcome claim(
                ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
            watch("claim");
            return super.claim(key, fingerprint, owner, lease, retention);
        }

        @Override
        public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
            watch("complete");
            return super.complete(key, owner, outcome, response);
        }

        @Override
        public boolean release(ScopeKey key, OwnerToken owner) {
            watch("release");
            return super.release(key, owner);
        }

        @Override
        public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
            watch("renew");
            return super.renew(key, owner, lease);
        }

        @Override
        public Optional<IdempotencyRecord> find(ScopeKey key) {
            watch("find");
            return super.find(key);
        }

        @Override
        public ChangeSubscription subscribe(ScopeKey key) {
            watch("subscribe");
            return super.subscribe(key);
        }
    }

    @Test
    void everyStoreCallOfEveryKindOfRequestRunsOffTheEventLoop() throws Exception {
        WatchedStore store = new WatchedStore();
        IdempotencyWebFilter filter = IdempotencyWebFilter.builder(
                        IdempotencyEngine.builder(store).build())
                .route(IdempotentRoute.builder("POST", "/v1/charges")
                        .policy(IdempotencyPolicy.custom()
                                .lease(Duration.ofMillis(600))
                                .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(20)))
                                .build())
                        .build())
                .route(IdempotentRoute.post("/v1/rejecting"))
                .tenantResolver(ReactiveTenantResolver.single("acme"))
                .build();
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        try (HttpContract.Server server = WebFluxServer.start(filter, () -> {}, request -> {
            runs.incrementAndGet();
            if (request.path().equals("/v1/charges")) {
                release.await(20, TimeUnit.SECONDS); // longer than the lease: the keep-alive renews it
            }
            return HttpContract.Reply.json(201, "{\"ok\":true}");
        })) {
            CompletableFuture<HttpResponse<byte[]>> first =
                    Call.post(server, "/v1/charges").key("k1").json("{}").sendAsync();
            await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
            CompletableFuture<HttpResponse<byte[]>> waiting =
                    Call.post(server, "/v1/charges").key("k1").json("{}").sendAsync();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> store.calls.stream()
                                            .filter(c -> c.startsWith("renew"))
                                            .count()
                                    >= 2
                            && store.calls.stream().anyMatch(c -> c.startsWith("subscribe")));
            release.countDown();
            assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
            HttpResponse<byte[]> coalesced = waiting.get(20, TimeUnit.SECONDS);
            assertThat(coalesced.headers().firstValue("Idempotent-Replayed")).hasValue("true");
            assertThat(Call.post(server, "/v1/charges")
                            .key("k1")
                            .json("{}")
                            .send()
                            .statusCode())
                    .isEqualTo(201);
            assertThat(Call.post(server, "/v1/rejecting")
                            .key("k2")
                            .json("{}")
                            .send()
                            .statusCode())
                    .isEqualTo(201);
        }
        assertThat(runs).hasValue(2);
        assertThat(store.calls)
                .anyMatch(c -> c.startsWith("claim"))
                .anyMatch(c -> c.startsWith("complete"))
                .anyMatch(c -> c.startsWith("renew"))
                .anyMatch(c -> c.startsWith("subscribe"));
        assertThat(store.onEventLoop).as("store calls made on an event loop").isEmpty();
    }
}
