package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.Lease;
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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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
                    public ClaimOutcome claim(
                            ScopeKey key,
                            Fingerprint fingerprint,
                            OwnerToken owner,
                            Duration lease,
                            Duration retention) {
                        throw new StoreUnavailableException("connection refused", null);
                    }
                }),
                new Broken(
                        "store failing with an unexpected exception",
                        () -> new ForwardingStore(InMemoryIdempotencyStore.create()) {
                            @Override
                            public ClaimOutcome claim(
                                    ScopeKey key,
                                    Fingerprint fingerprint,
                                    OwnerToken owner,
                                    Duration lease,
                                    Duration retention) {
                                throw new IllegalStateException("driver bug");
                            }
                        }),
                new Broken(
                        "redis on a closed port",
                        () -> RedisIdempotencyStore.create(
                                "redis://127.0.0.1:" + TestRedis.freePort(),
                                RedisStoreConfig.custom()
                                        .connectTimeout(Duration.ofMillis(500))
                                        .commandTimeout(Duration.ofMillis(500))
                                        .build())),
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
                TestServer server = TestServer.start(
                        app,
                        IdempotencyFilter.builder(IdempotencyEngine.builder(store)
                                        .listener(listener)
                                        .build())
                                .route(IdempotentRoute.post("/v1/charges"))
                                .tenantResolver(TenantResolver.single("acme"))
                                .storeUnavailableRetryAfter(Duration.ofSeconds(5))
                                .build())) {
            HttpResponse<byte[]> response = Call.post(server, "/v1/charges")
                    .key("k1")
                    .json("{\"amount\":1}")
                    .send();

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

    @ParameterizedTest(name = "{0}")
    @MethodSource("brokenStores")
    void withPassThroughTheHandlerRunsUnguardedAndTheStoreRestsForTheRetryAfter(Broken broken) throws Exception {
        TestApp app = new TestApp();
        app.handler((request, response) -> {
            response.setStatus(201);
            response.getWriter()
                    .print(request.getAttribute(IdempotencyFilter.UNGUARDED) + " "
                            + new String(
                                    request.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
        });
        CountingListener listener = new CountingListener();
        AtomicInteger claims = new AtomicInteger();
        try (IdempotencyStore broke = broken.store().get();
                IdempotencyStore store = new ForwardingStore(broke) {
                    @Override
                    public ClaimOutcome claim(
                            ScopeKey key,
                            Fingerprint fingerprint,
                            OwnerToken owner,
                            Duration lease,
                            Duration retention) {
                        claims.incrementAndGet();
                        return super.claim(key, fingerprint, owner, lease, retention);
                    }
                };
                TestServer server = TestServer.start(
                        app,
                        IdempotencyFilter.builder(IdempotencyEngine.builder(store)
                                        .listener(listener)
                                        .build())
                                .route(IdempotentRoute.post("/v1/charges"))
                                .tenantResolver(TenantResolver.single("acme"))
                                .whenStoreUnavailable(StoreUnavailablePolicy.PASS_THROUGH)
                                .storeUnavailableRetryAfter(Duration.ofMinutes(5))
                                .build())) {
            HttpResponse<byte[]> first = Call.post(server, "/v1/charges")
                    .key("k1")
                    .json("{\"amount\":1}")
                    .send();
            HttpResponse<byte[]> again = Call.post(server, "/v1/charges")
                    .key("k1")
                    .json("{\"amount\":1}")
                    .send();

            for (HttpResponse<byte[]> response : List.of(first, again)) {
                assertThat(response.statusCode()).isEqualTo(201);
                assertThat(Call.text(response))
                        .as("the handler read the body it was sent, marked unguarded")
                        .isEqualTo("true {\"amount\":1}");
                assertThat(response.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER))
                        .as("nothing recorded")
                        .isEmpty();
                assertThat(response.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER))
                        .isEmpty();
            }
            assertThat(app.executions).as("unguarded: the retry ran again").hasValue(2);
            assertThat(claims)
                    .as("the store is not tried again within the Retry-After")
                    .hasValue(1);
            assertThat(listener.storeErrors).hasValue(1);
        }
    }

    @Test
    void withPassThroughAStoreThatAnswersAgainGuardsTheNextRequest() throws Exception {
        TestApp app = new TestApp();
        AtomicBoolean down = new AtomicBoolean(true);
        IdempotencyStore store = new ForwardingStore(InMemoryIdempotencyStore.create()) {
            @Override
            public ClaimOutcome claim(
                    ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
                if (down.get()) {
                    throw new StoreUnavailableException("connection refused", null);
                }
                return super.claim(key, fingerprint, owner, lease, retention);
            }
        };
        try (TestServer server = TestServer.start(
                app,
                IdempotencyFilter.builder(IdempotencyEngine.builder(store).build())
                        .route(IdempotentRoute.post("/v1/charges"))
                        .tenantResolver(TenantResolver.single("acme"))
                        .whenStoreUnavailable(StoreUnavailablePolicy.PASS_THROUGH)
                        .storeUnavailableRetryAfter(Duration.ZERO)
                        .build())) {
            assertThat(Call.post(server, "/v1/charges")
                            .key("k1")
                            .json("{}")
                            .send()
                            .statusCode())
                    .isEqualTo(204);
            down.set(false);
            HttpResponse<byte[]> guarded =
                    Call.post(server, "/v1/charges").key("k1").json("{}").send();
            HttpResponse<byte[]> replayed =
                    Call.post(server, "/v1/charges").key("k1").json("{}").send();

            assertThat(guarded.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER))
                    .isPresent();
            assertThat(replayed.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER))
                    .hasValue("true");
            assertThat(app.executions).hasValue(2);
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
        try (TestServer server = TestServer.start(
                app,
                IdempotencyFilter.builder(IdempotencyEngine.builder(store).build())
                        .route(IdempotentRoute.post("/v1/charges"))
                        .tenantResolver(TenantResolver.single("acme"))
                        .build())) {
            HttpResponse<byte[]> response =
                    Call.post(server, "/v1/charges").key("k1").json("{}").send();

            assertThat(response.statusCode()).isEqualTo(409);
            assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(Json.topLevelString(response.body(), "type"))
                    .isEqualTo("https://exactly.dev/problems/idempotency-lease-lost");
            assertThat(Json.topLevelString(response.body(), "code")).isEqualTo("idempotency_lease_lost");
            assertThat(Call.text(response)).doesNotContain("charged");
            assertThat(app.executions).hasValue(1);
        }
    }

    @Test
    void renewalsThatFailWhileTheHandlerRunsAreSeenByItAndNeverTurnItsAnswerIntoANotExecuted() throws Exception {
        TestApp app = new TestApp();
        AtomicInteger failedRenewals = new AtomicInteger();
        AtomicBoolean lostSeen = new AtomicBoolean();
        app.handler((request, response) -> {
            Lease lease = (Lease) request.getAttribute(IdempotencyFilter.LEASE);
            // the store stops answering renewals: past its lease end the handler learns it may be taken over
            await().atMost(Duration.ofSeconds(20)).until(lease::isLost);
            lostSeen.set(true);
            response.setStatus(201);
            response.getWriter().print("charged");
        });
        IdempotencyStore store = new ForwardingStore(InMemoryIdempotencyStore.create()) {
            @Override
            public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
                failedRenewals.incrementAndGet();
                throw new StoreUnavailableException("read timed out", null);
            }
        };
        CountingListener listener = new CountingListener();
        try (TestServer server = TestServer.start(
                app,
                IdempotencyFilter.builder(IdempotencyEngine.builder(store)
                                .listener(listener)
                                .build())
                        .route(IdempotentRoute.builder("POST", "/v1/charges")
                                .policy(IdempotencyPolicy.custom()
                                        .lease(Duration.ofMillis(600))
                                        .build())
                                .build())
                        .tenantResolver(TenantResolver.single("acme"))
                        .build())) {
            HttpResponse<byte[]> response =
                    Call.post(server, "/v1/charges").key("k1").json("{}").send();

            // nobody took the key over, so the outcome is recorded: the handler's answer, replayed later
            assertThat(response.statusCode()).as(Call.text(response)).isEqualTo(201);
            assertThat(Call.text(response)).isEqualTo("charged");
            assertThat(lostSeen).isTrue();
            assertThat(failedRenewals.get()).isGreaterThanOrEqualTo(2);
            HttpResponse<byte[]> retry =
                    Call.post(server, "/v1/charges").key("k1").json("{}").send();
            assertThat(retry.statusCode()).isEqualTo(201);
            assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER))
                    .hasValue("true");
            assertThat(app.executions).hasValue(1);
        }
    }

    @Test
    void aStoreThatFailsAfterTheHandlerRanGivesTheHandlersAnswerNotANotExecuted() throws Exception {
        TestApp app = new TestApp();
        app.handler((request, response) -> {
            response.setStatus(201);
            response.setContentType("application/json");
            response.getWriter().print("{\"id\":\"ch_1\"}");
        });
        java.util.concurrent.atomic.AtomicBoolean storeDown = new java.util.concurrent.atomic.AtomicBoolean();
        InMemoryIdempotencyStore memory = InMemoryIdempotencyStore.create();
        IdempotencyStore store = new ForwardingStore(memory) {
            @Override
            public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus outcome, StoredResponse response) {
                if (storeDown.get()) {
                    throw new StoreUnavailableException("command timed out", null);
                }
                return super.complete(key, owner, outcome, response);
            }
        };
        storeDown.set(true);
        try (TestServer server = TestServer.start(
                app,
                IdempotencyFilter.builder(IdempotencyEngine.builder(store).build())
                        .route(IdempotentRoute.post("/v1/charges"))
                        .tenantResolver(TenantResolver.single("acme"))
                        .build())) {
            HttpResponse<byte[]> response =
                    Call.post(server, "/v1/charges").key("k1").json("{}").send();
            assertThat(response.statusCode()).isEqualTo(201);
            assertThat(Call.text(response)).isEqualTo("{\"id\":\"ch_1\"}");
            assertThat(response.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER))
                    .as("nothing recorded yet")
                    .isEmpty();

            // the store is back: the engine records the outcome with the owner token, and retries replay it
            storeDown.set(false);
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> memory.find(new dev.exactly.idempotency.Scope(
                                            "acme",
                                            "POST",
                                            "/v1/charges",
                                            new dev.exactly.idempotency.IdempotencyKey("k1"))
                                    .toScopeKey())
                            .map(r -> r.status() == RecordStatus.COMPLETED)
                            .orElse(false));
            HttpResponse<byte[]> retry =
                    Call.post(server, "/v1/charges").key("k1").json("{}").send();
            assertThat(retry.statusCode()).isEqualTo(201);
            assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER))
                    .hasValue("true");
            assertThat(app.executions).hasValue(1);
        }
    }

    @Test
    void aStoreThatFailsWhileTheHandlerRunsIsOutcomeUnknownNeverNotExecuted() throws Exception {
        TestApp app = new TestApp();
        app.handler((request, response) -> {
            Lease lease = (Lease) request.getAttribute(IdempotencyFilter.LEASE);
            lease.renew(Duration.ofSeconds(30)); // the store is down: this throws out of the handler
            response.setStatus(201);
        });
        IdempotencyStore store = new ForwardingStore(InMemoryIdempotencyStore.create()) {
            @Override
            public boolean renew(ScopeKey key, OwnerToken owner, Duration lease) {
                throw new StoreUnavailableException("connection reset", null);
            }
        };
        try (TestServer server = TestServer.start(
                app,
                IdempotencyFilter.builder(IdempotencyEngine.builder(store).build())
                        .route(IdempotentRoute.post("/v1/charges"))
                        .tenantResolver(TenantResolver.single("acme"))
                        .build())) {
            HttpResponse<byte[]> response =
                    Call.post(server, "/v1/charges").key("k1").json("{}").send();
            assertThat(response.statusCode()).isEqualTo(503);
            assertThat(Json.topLevelString(response.body(), "type"))
                    .isEqualTo("https://exactly.dev/problems/outcome-unknown");
            assertThat(Json.topLevelString(response.body(), "code")).isEqualTo("outcome_unknown");
            assertThat(Call.text(response)).contains("same Idempotency-Key").doesNotContain("refused before it ran");
            assertThat(response.headers().firstValue("Retry-After")).isPresent();
            assertThat(app.executions).hasValue(1);
        }
    }

    @Test
    void multipartAndDeepJsonAreRefusedBeforeTheKeyIsClaimed() throws Exception {
        TestApp app = new TestApp();
        CountingListener listener = new CountingListener();
        try (TestServer server = TestServer.start(
                app,
                IdempotencyFilter.builder(IdempotencyEngine.builder(InMemoryIdempotencyStore.create())
                                .listener(listener)
                                .build())
                        .route(IdempotentRoute.post("/v1/charges"))
                        .tenantResolver(TenantResolver.single("acme"))
                        .build())) {
            HttpResponse<byte[]> multipart = Call.post(server, "/v1/charges")
                    .key("k1")
                    .header("Content-Type", "multipart/form-data; boundary=xyz")
                    .bytes("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--xyz--\r\n"
                            .getBytes(StandardCharsets.UTF_8))
                    .send();
            assertThat(multipart.statusCode()).isEqualTo(415);
            assertThat(Json.topLevelString(multipart.body(), "type"))
                    .isEqualTo("https://exactly.dev/problems/unsupported-media-type");

            String deep = "[".repeat(20_000) + "]".repeat(20_000);
            HttpResponse<byte[]> tooDeep =
                    Call.post(server, "/v1/charges").key("k1").json(deep).send();
            assertThat(tooDeep.statusCode()).isEqualTo(400);
            assertThat(tooDeep.headers().firstValue("Content-Type")).hasValue(Problem.MEDIA_TYPE);
            assertThat(Json.topLevelString(tooDeep.body(), "code")).isEqualTo("json_too_deep");

            // neither claimed the key: a proper request with the same key runs
            HttpResponse<byte[]> ok = Call.post(server, "/v1/charges")
                    .key("k1")
                    .json("{\"amount\":1}")
                    .send();
            assertThat(ok.statusCode()).isEqualTo(204);
            assertThat(app.executions).hasValue(1);
        }
    }
}
