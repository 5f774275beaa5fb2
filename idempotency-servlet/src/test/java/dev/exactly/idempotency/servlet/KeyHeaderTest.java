package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The key's header is configurable: its name, and the aliases accepted for it (by default none but X-Idempotency-Key). */
class KeyHeaderTest {
    private static final TestApp app = new TestApp();
    private static TestServer server;

    @BeforeAll
    static void start() throws Exception {
        IdempotencyEngine engine =
                IdempotencyEngine.builder(InMemoryIdempotencyStore.create()).build();
        IdempotencyFilter filter = IdempotencyFilter.builder(engine)
                .route(IdempotentRoute.post("/v1/charges"))
                .tenantResolver(TenantResolver.apiKeys(Map.of("sk_a", "tenant-a")))
                .keyHeader("Request-Key", "X-Request-Key")
                .build();
        assertThat(filter.keyHeader()).isEqualTo("Request-Key");
        assertThat(filter.keyHeaderAliases()).containsExactly("X-Request-Key");
        server = TestServer.start(app, filter);
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @BeforeEach
    void reset() {
        app.executions.set(0);
        app.handler((request, response) -> {
            response.setStatus(201);
            response.getWriter().print("{\"run\":" + app.executions.get() + "}");
        });
    }

    private static Call charge() {
        return Call.post(server, "/v1/charges").apiKey("sk_a").json("{\"amount\":1}");
    }

    @Test
    void theConfiguredHeaderAndItsAliasNameTheKeyAndTheDefaultOnesNoLonger() throws Exception {
        HttpResponse<byte[]> first = charge().header("Request-Key", "k-1").send();
        HttpResponse<byte[]> alias = charge().header("X-Request-Key", "k-1").send();
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(alias.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER))
                .hasValue("true");
        assertThat(alias.body()).isEqualTo(first.body());

        HttpResponse<byte[]> standard =
                charge().header("Idempotency-Key", "k-1").send();
        assertThat(standard.statusCode()).isEqualTo(400);
        assertThat(Json.topLevelString(standard.body(), "code")).isEqualTo("idempotency_key_missing");
        assertThat(Json.topLevelString(standard.body(), "detail"))
                .isEqualTo("this endpoint requires a Request-Key header");
        assertThat(charge().header("X-Idempotency-Key", "k-1").send().statusCode())
                .isEqualTo(400);

        HttpResponse<byte[]> disagreeing = charge().header("Request-Key", "k-1")
                .header("X-Request-Key", "k-2")
                .send();
        assertThat(disagreeing.statusCode()).isEqualTo(400);
        assertThat(Json.topLevelString(disagreeing.body(), "code")).isEqualTo("idempotency_key_invalid");
        assertThat(app.executions).hasValue(1);
    }

    @Test
    void headerNamesAreValidated() {
        IdempotencyFilter.Builder builder = IdempotencyFilter.builder(
                IdempotencyEngine.builder(InMemoryIdempotencyStore.create()).build());
        assertThatThrownBy(() -> builder.keyHeader("Bad Header")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.keyHeader("Request-Key", "request-key"))
                .hasMessageContaining("repeats");
        assertThat(builder.keyHeader("Request-Key").build().keyHeaderAliases()).isEmpty();
        assertThat(IdempotencyFilter.builder(IdempotencyEngine.builder(InMemoryIdempotencyStore.create())
                                .build())
                        .build()
                        .keyHeaderAliases())
                .containsExactly(IdempotencyFilter.KEY_ALIAS_HEADER);
    }
}
