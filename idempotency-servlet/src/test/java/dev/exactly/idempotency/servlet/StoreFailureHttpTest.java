package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.testing.TestRedis;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;

/** The store fails: the filter fails closed, over real HTTP. */
class StoreFailureHttpTest {

    record Broken(String name, Supplier<IdempotencyStore> store) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Broken> brokenStores() {
        return List.of(
                new Broken("throwing store", () -> new ForwardingStore(InMemoryIdempotencyStore.create()) {
                    @Override
                    public ClaimOutcome claim(ScopeKey key, Fingerprint fingerprint, Duration lease, Duration retention) {
                        throw new StoreUnavailableException("connection refused", null);
                    }
                }),
                new Broken("store failing with an unexpected exception", () -> new ForwardingStore(InMemoryIdempotencyStore.create()) {
                    @Override
                    public ClaimOutcome claim(ScopeKey key, Fingerprint fingerprint, Duration lease, Duration retention) {
                        throw new IllegalStateException("driver bug");
                    }
                }),
                new Broken("redis on a closed port", () -> RedisIdempotencyStore.create(
                        "redis://127.0.0.1:" + TestRedis.freePort(),
                        RedisStoreConfig.custom().connectTimeout(Duration.ofMillis(500)).commandTimeout(Duration.ofMillis(500)).build())),
                new Broken("postgres on a closed port", () -> {
                    PGSimpleDataSource ds = new PGSimpleDataSource();
                    ds.setUrl("jdbc:postgresql://127.0.0.1:" + TestRedis.freePort() + "/test?user=postgres");
                    return PostgresIdempotencyStore.create(ds);
                }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("brokenStores")
    void anUnavailableStoreIs503WithRetryAfterAndTheHandlerIsNotCalled(Broken broken) throws Exception {
        TestApp app = new TestApp();
        CountingListener listener = new CountingListener();
        try (IdempotencyStore store = broken.store().get();
                TestServer server = TestServer.start(app, IdempotencyFilter.builder(
                                IdempotencyEngine.builder(store).listener(listener).build())
                        .route(IdempotentRoute.post("/v1/charges"))
                        .tenantResolver(TenantResolver.single("acme"))
                        .storeUnavailableRetryAfter(Duration.ofSeconds(5))
                        .build())) {
            HttpResponse<byte[]> response = Call.post(server, "/v1/charges").key("k1").json("{\"amount\":1}").send();

            assertThat(response.statusCode()).isEqualTo(503);
            assertThat(response.headers().firstValue("Retry-After")).hasValue("5");
            assertThat(response.headers().firstValue("Content-Type")).hasValue(Problem.MEDIA_TYPE);
            assertThat(Json.topLevelString(response.body(), "type"))
                    .isEqualTo("https://exactly.dev/problems/idempotency-store-unavailable");
            assertThat(Json.topLevelString(response.body(), "code")).isEqualTo("idempotency_store_unavailable");
            assertThat(Call.text(response)).doesNotContain("driver bug").doesNotContain("connection refused");
            assertThat(app.executions).hasValue(0);
            assertThat(listener.storeErrors).hasValue(1);
        }
    }

    @Test
    void aHandlerThatLostItsLeaseGets409AndNothingIsReplayed() throws Exception {
        TestApp app = new TestApp();
        app.handler((request, response) -> {
            response.setStatus(201);
            response.getWriter().print("charged");
        });
        IdempotencyStore store = new ForwardingStore(InMemoryIdempotencyStore.create()) {
            @Override
            public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
                return false; // another owner took over meanwhile
            }
        };
        try (TestServer server = TestServer.start(app, IdempotencyFilter.builder(IdempotencyEngine.builder(store).build())
                .route(IdempotentRoute.post("/v1/charges"))
                .tenantResolver(TenantResolver.single("acme"))
                .build())) {
            HttpResponse<byte[]> response = Call.post(server, "/v1/charges").key("k1").json("{}").send();

            assertThat(response.statusCode()).isEqualTo(409);
            assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(Json.topLevelString(response.body(), "type")).isEqualTo("https://exactly.dev/problems/idempotency-lease-lost");
            assertThat(Json.topLevelString(response.body(), "code")).isEqualTo("idempotency_lease_lost");
            assertThat(Call.text(response)).doesNotContain("charged");
            assertThat(app.executions).hasValue(1);
        }
    }
}
