package dev.exactly.chaos;

import dev.exactly.idempotency.client.IdempotentClientListener;
import dev.exactly.idempotency.client.IdempotentHttpClient;
import dev.exactly.idempotency.client.IdempotentRequest;
import dev.exactly.idempotency.client.IdempotentResponse;
import dev.exactly.idempotency.client.RetryPolicy;
import dev.exactly.idempotency.client.intent.FileKeyJournal;
import dev.exactly.idempotency.client.intent.IntentClient;
import dev.exactly.idempotency.client.intent.IntentId;
import dev.exactly.idempotency.client.intent.JournalEntry;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;

/**
 * A payment client in a process of its own, for {@link ClientCrashTest}: it pays one order through an
 * {@link IntentClient} with a {@link FileKeyJournal}, and reports on standard output what it does, one
 * line per event, flushed at once:
 *
 * <pre>
 *   attempt &lt;n&gt; &lt;key&gt; &lt;sha-256 of the journaled body&gt;     (the journal as the attempt goes out)
 *   answer &lt;status&gt; &lt;replayed&gt; &lt;attempts&gt; &lt;key&gt; &lt;body&gt;
 * </pre>
 *
 * Arguments: service base URI, API key, journal directory, order id, amount (minor units), customer.
 * Killed with {@code kill -9} while it waits for an answer; started again with the same arguments it
 * must resume the order with the same key and the same bytes.
 */
public final class PaymentClientMain {
    private PaymentClientMain() {}

    public static void main(String[] args) throws Exception {
        URI base = URI.create(args[0]);
        String apiKey = args[1];
        FileKeyJournal journal = FileKeyJournal.open(Path.of(args[2]));
        IntentId order = IntentId.of("checkout", args[3]);
        String body = """
                {"amount":%s,"currency":"usd","customer":"%s","source":"tok_visa","description":"order %s"}""".formatted(Long.parseLong(args[4]), args[5], args[3]);

        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        IdempotentHttpClient client = IdempotentHttpClient.builder(http)
                .policy(RetryPolicy.custom()
                        .deadline(Duration.ofSeconds(60))
                        .maxAttempts(30)
                        .build())
                .listener(new IdempotentClientListener() {
                    @Override
                    public void attemptStarted(Attempt attempt) {
                        JournalEntry entry = journal.find(order).orElseThrow();
                        say("attempt " + attempt.number() + " " + attempt.key() + " "
                                + sha256(entry.request().body()));
                    }
                })
                .build();
        IntentClient intents = IntentClient.create(client, journal);

        IdempotentResponse answer = intents.send(
                order,
                IdempotentRequest.builder("POST", base.resolve(Payment.ROUTE))
                        .header("Authorization", "Bearer " + apiKey)
                        .header("Content-Type", "application/json")
                        .body(body.getBytes(StandardCharsets.UTF_8))
                        .build());
        say("answer " + answer.status() + " " + answer.replayed() + " " + answer.attempts() + " " + answer.key() + " "
                + answer.bodyText());
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
