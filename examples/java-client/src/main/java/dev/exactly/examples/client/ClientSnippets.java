package dev.exactly.examples.client;

import dev.exactly.idempotency.client.IdempotencyKeys;
import dev.exactly.idempotency.client.IdempotentHttpClient;
import dev.exactly.idempotency.client.IdempotentRequest;
import dev.exactly.idempotency.client.IdempotentResponse;
import dev.exactly.idempotency.client.intent.FileKeyJournal;
import dev.exactly.idempotency.client.intent.IntentClient;
import dev.exactly.idempotency.client.intent.IntentId;
import dev.exactly.idempotency.client.intent.JournalEntry;
import dev.exactly.idempotency.client.spring.IdempotencyRetryFilter;
import dev.exactly.idempotency.client.spring.IdempotencyRetryInterceptor;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The README's "The Java client", block by block, as code that compiles; {@code ClientSnippetsTest} runs
 * the first two against the plain-Java example server. Each method holds one README block verbatim.
 */
public final class ClientSnippets {
    private ClientSnippets() {}

    /** What the Spring snippet sends. */
    public record ChargeRequest(long amount, String currency, String customerId) {}

    /** What the Spring snippet reads back. */
    public record Charge(String id, String status) {}

    /** "Derived keys": the same intent gives the same key in any process. */
    public static IdempotentResponse derivedKey(
            String base, String apiKey, String userId, String orderId, long amount, String currency, byte[] json)
            throws InterruptedException {
        IdempotentHttpClient client = IdempotentHttpClient.create(HttpClient.newHttpClient());

        String key = IdempotencyKeys.derive("checkout", userId, orderId, amount + " " + currency);
        IdempotentResponse answer = client.send(
                IdempotentRequest.builder("POST", URI.create(base + "/v1/charges"))
                        .header("Authorization", "Bearer " + apiKey)
                        .header("Content-Type", "application/json")
                        .body(json)
                        .build(),
                key);
        answer.status(); // the final answer: 201, 402, 400, ...
        answer.replayed(); // Idempotent-Replayed: true, the charge ran before (an earlier attempt, another process)
        answer.attempts(); // how many attempts it took
        return answer;
    }

    /** "Journaled keys": the key is written to {@code var/payment-keys} before the first byte is sent. */
    public static IdempotentResponse journaledKey(
            IdempotentHttpClient client, IdempotentRequest request, String orderId, String apiKey)
            throws InterruptedException {
        IntentClient intents = IntentClient.create(client, FileKeyJournal.open(Path.of("var/payment-keys")));

        IdempotentResponse answer = intents.send(IntentId.of("checkout", orderId), request);

        for (JournalEntry e : intents.pending()) { // at startup: what a crash left unanswered
            intents.resume(e.intent(), Map.of("Authorization", "Bearer " + apiKey));
        }
        return answer;
    }

    /** "With Spring's HTTP clients": compiled only, its base URL is the README's. */
    public static Charge springClients(String apiKey, String userId, String orderId, String customerId) {
        RestClient payments = RestClient.builder()
                .baseUrl("https://payments.example.com")
                .requestInterceptor(IdempotencyRetryInterceptor.create())
                .build();

        Charge charge = payments.post()
                .uri("/v1/charges")
                .header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", IdempotencyKeys.derive("checkout", userId, orderId))
                .contentType(MediaType.APPLICATION_JSON)
                .body(new ChargeRequest(4999, "usd", customerId))
                .retrieve()
                .body(Charge.class);

        WebClient reactive = WebClient.builder()
                .baseUrl("https://payments.example.com")
                .filter(IdempotencyRetryFilter.create())
                .build();
        return charge;
    }
}
