package dev.exactly.examples.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.examples.plain.ChargeServer;
import dev.exactly.idempotency.client.IdempotentHttpClient;
import dev.exactly.idempotency.client.IdempotentRequest;
import dev.exactly.idempotency.client.IdempotentResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The README's Java client snippets, run against the plain-Java example server (in-memory store). */
class ClientSnippetsTest {
    private static final String API_KEY = "sk_test_4f9a2c";
    private static ChargeServer server;
    private static String base;

    @BeforeAll
    static void startServer() throws Exception {
        server = ChargeServer.start(Map.of("store", "memory", "port", "0"));
        base = "http://127.0.0.1:" + server.port();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Test
    void aDerivedKeyChargesOnceFromAnyProcess() throws Exception {
        String order = "order-" + UUID.randomUUID();
        byte[] json = "{\"amount\":1000,\"currency\":\"EUR\"}".getBytes(StandardCharsets.UTF_8);

        IdempotentResponse first = ClientSnippets.derivedKey(base, API_KEY, "user-7", order, 1000, "EUR", json);
        IdempotentResponse again = ClientSnippets.derivedKey(base, API_KEY, "user-7", order, 1000, "EUR", json);

        assertThat(first.status()).isEqualTo(201);
        assertThat(first.replayed()).isFalse();
        assertThat(first.attempts()).isEqualTo(1);
        assertThat(again.key()).isEqualTo(first.key());
        assertThat(again.replayed()).isTrue();
        assertThat(again.bodyText()).isEqualTo(first.bodyText());
    }

    @Test
    void aJournaledKeyIsWrittenBeforeSendingAndReusedForTheSameIntent() throws Exception {
        IdempotentHttpClient client = IdempotentHttpClient.create(HttpClient.newHttpClient());
        IdempotentRequest request = IdempotentRequest.builder("POST", URI.create(base + "/v1/charges"))
                .header("Authorization", "Bearer " + API_KEY)
                .header("Content-Type", "application/json")
                .body("{\"amount\":500,\"currency\":\"EUR\"}".getBytes(StandardCharsets.UTF_8))
                .build();
        String order = "order-" + UUID.randomUUID();

        IdempotentResponse first = ClientSnippets.journaledKey(client, request, order, API_KEY);
        IdempotentResponse again = ClientSnippets.journaledKey(client, request, order, API_KEY);

        assertThat(first.status()).isEqualTo(201);
        assertThat(again.key()).isEqualTo(first.key());
        assertThat(again.replayed()).isTrue();
        try (var entries = Files.list(Path.of("var/payment-keys"))) {
            assertThat(entries.count()).as("journal entries on disk").isPositive();
        }
    }
}
