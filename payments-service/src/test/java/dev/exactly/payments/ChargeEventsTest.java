package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.exactly.payments.webhooks.WebhookSignature;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * Charges and refunds record their webhook events in the transactions that decide them: one
 * {@code charge.succeeded}, {@code charge.failed} or {@code refund.succeeded} per decision (none for a
 * replay), delivered signed to a real receiver, and none for a finishing transaction that died before its
 * commit, whose recovery then records exactly one.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(Crashes.Installed.class)
class ChargeEventsTest extends ServiceTest {

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_events");
        registry.add("exactly.payments.lease", () -> "1s");
        registry.add("exactly.payments.recovery.interval", () -> "200ms");
        registry.add("exactly.payments.webhooks.interval", () -> "100ms");
    }

    @Autowired
    Crashes crashes;

    /** One delivery as received. */
    record Received(String eventId, String type, String signature, byte[] body) {
        JsonNode json() {
            return JSON.readTree(body);
        }
    }

    /** Added to by the receiver's threads while the test reads it: a snapshot per read. */
    private final List<Received> received = new CopyOnWriteArrayList<>();

    private HttpServer receiver;
    private String secret;

    @BeforeEach
    void receiver() throws IOException {
        receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        receiver.createContext("/", exchange -> {
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readAllBytes();
            }
            var h = exchange.getRequestHeaders();
            received.add(new Received(
                    h.getFirst("Exactly-Event-Id"),
                    h.getFirst("Exactly-Event-Type"),
                    h.getFirst(WebhookSignature.HEADER),
                    body));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        receiver.start();
        Answer created = post(
                "/v1/webhook-endpoints",
                ACME,
                null,
                "{\"url\":\"http://127.0.0.1:" + receiver.getAddress().getPort() + "/hooks\"}");
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        secret = created.json().get("secret").stringValue();
    }

    @AfterEach
    void stopReceiver() {
        receiver.stop(0);
        delete(get("/v1/webhook-endpoints", ACME));
    }

    private void delete(Answer endpoints) {
        endpoints
                .json()
                .get("data")
                .forEach(e -> send(java.net.http.HttpRequest.newBuilder(
                                uri("/v1/webhook-endpoints/" + e.get("id").stringValue()))
                        .header("Authorization", "Bearer " + ACME)
                        .DELETE()
                        .build()));
    }

    private List<Received> about(String subject) {
        return received.stream()
                .filter(r -> r.json().get("subject").stringValue().equals(subject))
                .toList();
    }

    private long eventsOf(String subject) {
        return count("SELECT count(*) FROM payments_event WHERE subject_id = ?", subject);
    }

    @Test
    void eachDecisionIsOneEventAndAReplayIsNone() {
        String body = charge(4200, "cus_events");
        Answer charged = post("/v1/charges", ACME, "events-charge-1", body);
        assertThat(charged.status()).as(charged.text()).isEqualTo(201);
        String chargeId = charged.json().get("id").stringValue();
        assertThat(post("/v1/charges", ACME, "events-charge-1", body).status()).isEqualTo(201);

        Answer declined = post("/v1/charges", ACME, "events-charge-2", charge(500, "cus_events", "tok_chargeDeclined"));
        assertThat(declined.status()).isEqualTo(402);
        String declinedId = declined.json().get("charge").stringValue();

        String refundBody = "{\"charge\":\"" + chargeId + "\",\"amount\":1000}";
        Answer refunded = post("/v1/refunds", ACME, "events-refund-1", refundBody);
        assertThat(refunded.status()).as(refunded.text()).isEqualTo(201);
        String refundId = refunded.json().get("id").stringValue();
        assertThat(post("/v1/refunds", ACME, "events-refund-1", refundBody).status())
                .isEqualTo(201);

        await().atMost(Duration.ofSeconds(30))
                .until(() -> about(chargeId).size() == 1
                        && about(declinedId).size() == 1
                        && about(refundId).size() == 1);

        Received succeeded = about(chargeId).getFirst();
        assertThat(succeeded.type()).isEqualTo("charge.succeeded");
        JsonNode charge = succeeded.json().get("data").get("object");
        assertThat(charge.get("status").stringValue()).isEqualTo("succeeded");
        assertThat(charge.get("amount").longValue()).isEqualTo(4200);
        assertThat(charge.get("amount_refunded").longValue())
                .as("the charge as its own transaction left it")
                .isZero();
        assertThat(charge.toString()).isEqualTo(charged.json().toString());

        Received failed = about(declinedId).getFirst();
        assertThat(failed.type()).isEqualTo("charge.failed");
        assertThat(failed.json().get("data").get("object").get("status").stringValue())
                .isEqualTo("failed");
        assertThat(failed.json().get("data").get("object").get("failure_code").stringValue())
                .isEqualTo("card_declined");

        Received refund = about(refundId).getFirst();
        assertThat(refund.type()).isEqualTo("refund.succeeded");
        assertThat(refund.json().get("data").get("object").toString())
                .isEqualTo(refunded.json().toString());

        for (Received r : List.of(succeeded, failed, refund)) {
            WebhookSignature.verify(secret, r.signature(), r.body(), WebhookSignature.DEFAULT_TOLERANCE);
            assertThat(r.json().get("id").stringValue()).isEqualTo(r.eventId());
        }
        // replays recorded nothing
        assertThat(eventsOf(chargeId)).isEqualTo(1);
        assertThat(eventsOf(declinedId)).isEqualTo(1);
        assertThat(eventsOf(refundId)).isEqualTo(1);
        Answer listed = get("/v1/events?limit=500", ACME);
        assertThat(listed.text()).contains(succeeded.eventId(), failed.eventId(), refund.eventId());
    }

    @Test
    void aFinishThatDiesBeforeItsCommitRecordsNoEventAndItsRecoveryRecordsOne() {
        String customer = "cus_events_crash";
        crashes.arm(customer, Crashes.Point.BEFORE_FINISH);
        Answer crashed = post("/v1/charges", ACME, "events-crash-1", charge(777, customer));
        assertThat(crashed.status()).isGreaterThanOrEqualTo(500);
        String chargeId = chargeIdByDownstreamPrefix(customer);
        assertThat(chargeStatus(chargeId)).isEqualTo("pending");
        assertThat(eventsOf(chargeId))
                .as("the event rolled back with the charge's final state")
                .isZero();

        // the recovery worker finishes the charge once the dead owner's lease ends
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> chargeStatus(chargeId).equals("succeeded"));
        await().atMost(Duration.ofSeconds(30)).until(() -> about(chargeId).size() == 1);
        assertThat(eventsOf(chargeId)).isEqualTo(1);
        Map<String, Object> event = rows("SELECT type FROM payments_event WHERE subject_id = ?", chargeId)
                .getFirst();
        assertThat(event.get("type")).isEqualTo("charge.succeeded");
        assertThat(about(chargeId).getFirst().type()).isEqualTo("charge.succeeded");
    }
}
