package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.exactly.payments.webhooks.EventType;
import dev.exactly.payments.webhooks.Outbox;
import dev.exactly.payments.webhooks.WebhookEndpoints;
import dev.exactly.payments.webhooks.WebhookSignature;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import tools.jackson.databind.JsonNode;

/**
 * The webhook endpoints and the event list over real HTTP: an endpoint is created with a secret shown
 * once, bad URLs and event types are 422 problem documents (never a 500), endpoints are listed and
 * disabled per tenant, events are paged per tenant, and the service's own worker delivers a recorded event,
 * signed with the endpoint's secret, to a real receiver.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class WebhookApiTest extends DefaultServiceTest {
    @Autowired
    Outbox outbox;

    private Answer createEndpoint(String apiKey, String body) {
        return post("/v1/webhook-endpoints", apiKey, null, body);
    }

    private Answer delete(String path, String apiKey) {
        return send(HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(60))
                .header("Authorization", "Bearer " + apiKey)
                .DELETE()
                .build());
    }

    private String record(String tenant, EventType type, String subject) {
        return jdbc.inTransaction(c -> outbox.record(c, tenant, type, subject, "{\"id\":\"" + subject + "\"}"));
    }

    @Test
    void aTenantHasAtMostSixteenEnabledEndpointsEvenWhenItsCreationsRace() throws Exception {
        long before =
                count("SELECT count(*) FROM payments_webhook_endpoint WHERE tenant = 'globex' AND status = 'enabled'");
        int asked = (int) (WebhookEndpoints.MAX_ENABLED - before) + 8;
        List<Answer> answers = Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        List<java.util.concurrent.Future<Boolean>> sent = new ArrayList<>();
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < asked; i++) {
                int n = i;
                sent.add(threads.submit(() -> {
                    go.await();
                    return answers.add(
                            createEndpoint(GLOBEX, "{\"url\":\"https://hooks.example.com/limit/" + n + "\"}"));
                }));
            }
            go.countDown();
        }
        for (var request : sent) {
            request.get(); // a request that threw fails the test with its own exception
        }
        assertThat(answers).hasSize(asked);
        assertThat(answers.stream().filter(a -> a.status() == 201))
                .hasSize((int) (WebhookEndpoints.MAX_ENABLED - before));
        List<Answer> refused = answers.stream().filter(a -> a.status() != 201).toList();
        assertThat(refused).hasSize(8).allSatisfy(a -> {
            assertThat(a.status()).isEqualTo(409);
            assertThat(a.problemType()).isEqualTo("webhook-endpoint-limit");
        });
        assertThat(
                        count(
                                "SELECT count(*) FROM payments_webhook_endpoint WHERE tenant = 'globex' AND status = 'enabled'"))
                .isEqualTo(WebhookEndpoints.MAX_ENABLED);
        assertThat(createEndpoint(ACME, "{\"url\":\"https://hooks.example.com/other-tenant\"}")
                        .status())
                .as("another tenant is not held back")
                .isEqualTo(201);

        // disabling one makes room for one
        String first = answers.stream()
                .filter(a -> a.status() == 201)
                .findFirst()
                .orElseThrow()
                .json()
                .get("id")
                .stringValue();
        assertThat(delete("/v1/webhook-endpoints/" + first, GLOBEX).status()).isEqualTo(200);
        assertThat(createEndpoint(GLOBEX, "{\"url\":\"https://hooks.example.com/limit/again\"}")
                        .status())
                .isEqualTo(201);
        jdbc.inTransaction(c -> dev.exactly.payments.db.Jdbc.update(c, """
                UPDATE payments_webhook_endpoint SET status = 'disabled', disabled_at = now()
                 WHERE url LIKE 'https://hooks.example.com/%' AND status = 'enabled'""", st -> {}));
    }

    @Test
    void anEndpointIsCreatedWithASecretShownOnceListedAndDisabled() {
        Answer created = createEndpoint(
                ACME,
                "{\"url\":\"https://hooks.example.com/exactly?x=1\","
                        + "\"enabled_events\":[\"charge.succeeded\",\"refund.succeeded\"],\"description\":\"orders\"}");
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        JsonNode endpoint = created.json();
        String id = endpoint.get("id").stringValue();
        assertThat(id).startsWith("we_");
        assertThat(created.header("Location")).isEqualTo("/v1/webhook-endpoints/" + id);
        assertThat(endpoint.get("secret").stringValue()).matches("whsec_[A-Za-z0-9]{32}");
        assertThat(endpoint.get("url").stringValue()).isEqualTo("https://hooks.example.com/exactly?x=1");
        assertThat(endpoint.get("status").stringValue()).isEqualTo("enabled");

        Answer list = get("/v1/webhook-endpoints", ACME);
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.text()).contains(id).doesNotContain("whsec_");
        assertThat(get("/v1/webhook-endpoints/" + id, ACME).text()).doesNotContain("whsec_");
        assertThat(get("/v1/webhook-endpoints", GLOBEX).text()).doesNotContain(id);
        assertThat(get("/v1/webhook-endpoints/" + id, GLOBEX).status()).isEqualTo(404);
        assertThat(delete("/v1/webhook-endpoints/" + id, GLOBEX).status()).isEqualTo(404);

        Answer disabled = delete("/v1/webhook-endpoints/" + id, ACME);
        assertThat(disabled.status()).isEqualTo(200);
        assertThat(disabled.json().get("status").stringValue()).isEqualTo("disabled");
        assertThat(delete("/v1/webhook-endpoints/" + id, ACME).status())
                .as("disabling again")
                .isEqualTo(200);
        assertThat(delete("/v1/webhook-endpoints/we_nothing", ACME).status()).isEqualTo(404);
        assertThat(delete("/v1/webhook-endpoints/..%2f", ACME).status()).isIn(400, 404);
        assertThat(get("/v1/webhook-endpoints", OPERATOR).status()).isEqualTo(403);
        assertThat(get("/v1/webhook-endpoints", null).status()).isEqualTo(401);
    }

    @Test
    void badEndpointsAreProblemDocumentsNeverA500() {
        String[][] cases = {
            {"{\"url\":\"ftp://example.com/x\"}", "url", "url_invalid"},
            {"{\"url\":\"javascript:alert(1)\"}", "url", "url_invalid"},
            {"{\"url\":\"file:///etc/passwd\"}", "url", "url_invalid"},
            {"{\"url\":\"not a url\"}", "url", "url_invalid"},
            {"{\"url\":\"/relative/path\"}", "url", "url_invalid"},
            {"{\"url\":\"https://user:pw@example.com/\"}", "url", "url_invalid"},
            {"{\"url\":\"https://example.com/#frag\"}", "url", "url_invalid"},
            {"{\"url\":\"https:///nohost\"}", "url", "url_invalid"},
            {"{\"url\":\"https://" + "a".repeat(2100) + ".com/\"}", "url", "url_invalid"},
            // a number for a host is 127.0.0.1 to one resolver and a name to another: refused even in demo mode
            {"{\"url\":\"http://2130706433/\"}", "url", "url_invalid"},
            {"{\"url\":\"http://0177.0.0.1/\"}", "url", "url_invalid"},
            {"{\"url\":42}", "url", "parameter_invalid"},
            {"{}", "url", "parameter_missing"},
            {
                "{\"url\":\"https://example.com/\",\"enabled_events\":[\"charge.exploded\"]}",
                "enabled_events",
                "event_type_unknown"
            },
            {"{\"url\":\"https://example.com/\",\"enabled_events\":[]}", "enabled_events", "parameter_invalid"},
            {"{\"url\":\"https://example.com/\",\"enabled_events\":\"*\"}", "enabled_events", "parameter_invalid"},
            {
                "{\"url\":\"https://example.com/\",\"enabled_events\":[\"*\",\"charge.failed\"]}",
                "enabled_events",
                "parameter_invalid"
            },
            {"{\"url\":\"https://example.com/\",\"enabled_events\":[1]}", "enabled_events", "parameter_invalid"},
            {"{\"url\":\"https://example.com/\",\"secret\":\"mine\"}", "secret", "parameter_unknown"},
            {"[1,2]", "", "invalid_json"},
            {"{\"url\":", "", "invalid_json"},
            // a member named twice is not taken as the first or the last: which one a reader keeps differs
            {"{\"url\":\"https://example.com/a\",\"url\":\"https://example.com/b\"}", "url", "parameter_duplicated"},
            {
                "{\"url\":\"https://example.com/\",\"enabled_events\":[\"*\"],\"description\":\"a\",\"description\":\"b\"}",
                "description",
                "parameter_duplicated"
            },
        };
        for (String[] c : cases) {
            Answer answer = createEndpoint(ACME, c[0]);
            assertThat(answer.status()).as(c[0] + " -> " + answer.text()).isEqualTo(422);
            assertThat(answer.header("Content-Type")).startsWith("application/problem+json");
            assertThat(answer.problemType()).isEqualTo("validation-failed");
            JsonNode error = answer.json().get("errors").get(0);
            assertThat(error.get("field").stringValue()).as(c[0]).isEqualTo(c[1]);
            assertThat(error.get("code").stringValue()).as(c[0]).isEqualTo(c[2]);
        }
        // where the body stops being JSON, so that the client can find it; nothing of the body is echoed
        Answer truncated = createEndpoint(ACME, "{\"url\":\"https://example.com/\",\n\"enabled_events\":[\"*\"");
        assertThat(truncated.json().get("errors").get(0).get("message").stringValue())
                .isEqualTo("the request body is not valid JSON (line 2, column 22)");
        Answer nested = createEndpoint(ACME, "{\"url\":\"https://example.com/\",\"x\":{\"k\":1,\"k\":2}}");
        assertThat(nested.json().get("errors").get(0).get("field").stringValue())
                .isEqualTo("x.k");
        assertThat(nested.json().get("errors").get(0).get("message").stringValue())
                .isEqualTo("x.k is given more than once: send each member once");
        String longName = "n".repeat(5_000);
        Answer longDuplicate = createEndpoint(
                ACME, "{\"url\":\"https://example.com/\",\"" + longName + "\":1,\"" + longName + "\":2}");
        // no member of the API has a name of more than 40 characters: a longer one is echoed cut, in field too
        assertThat(longDuplicate.json().get("errors").get(0).get("field").stringValue())
                .isEqualTo("n".repeat(40) + "...");
        assertThat(longDuplicate.json().get("errors").get(0).get("message").stringValue())
                .isEqualTo("n".repeat(40) + "... is given more than once: send each member once");
        Answer form = send(HttpRequest.newBuilder(uri("/v1/webhook-endpoints"))
                .timeout(Duration.ofSeconds(60))
                .header("Authorization", "Bearer " + ACME)
                .header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString("url=x"))
                .build());
        assertThat(form.status()).isEqualTo(415);
        assertThat(get("/v1/webhook-endpoints", ACME).text()).doesNotContain("example.com/#frag");
    }

    @Test
    void eventsArePagedPerTenantOldestFirst() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(record(
                    "acme", i % 2 == 0 ? EventType.CHARGE_SUCCEEDED : EventType.REFUND_SUCCEEDED, "ch_page_" + i));
        }
        String theirs = record("globex", EventType.CHARGE_SUCCEEDED, "ch_globex");

        List<String> seen = new ArrayList<>();
        String after = null;
        int pages = 0;
        do {
            Answer page = get("/v1/events?limit=2" + (after == null ? "" : "&after=" + after), ACME);
            assertThat(page.status()).as(page.text()).isEqualTo(200);
            page.json().get("data").forEach(e -> seen.add(e.get("id").stringValue()));
            JsonNode next = page.json().get("next_after");
            after = next.isNull() ? null : next.stringValue();
            assertThat(page.json().get("has_more").booleanValue()).isEqualTo(after != null);
            pages++;
        } while (after != null && pages < 1000);
        assertThat(seen).containsSubsequence(ids).doesNotContain(theirs);

        Answer refunds = get("/v1/events?type=refund.succeeded&limit=500", ACME);
        assertThat(refunds.json().get("data"))
                .allSatisfy(e -> assertThat(e.get("type").stringValue()).isEqualTo("refund.succeeded"));
        assertThat(refunds.text()).contains(ids.get(1), ids.get(3)).doesNotContain(ids.get(0));

        Answer one = get("/v1/events/" + ids.get(0), ACME);
        assertThat(one.status()).isEqualTo(200);
        assertThat(one.json().get("type").stringValue()).isEqualTo("charge.succeeded");
        assertThat(one.json().get("data").get("object").get("id").stringValue()).isEqualTo("ch_page_0");
        assertThat(one.json().get("deliveries").isArray()).isTrue();
        assertThat(get("/v1/events/" + theirs, ACME).status()).isEqualTo(404);
        assertThat(get("/v1/events/evt_nothing", ACME).status()).isEqualTo(404);
        Answer redelivered = post("/v1/events/" + ids.get(0) + "/redeliver", ACME, null, "");
        assertThat(redelivered.status()).as(redelivered.text()).isEqualTo(200);
        assertThat(redelivered.json().get("id").stringValue()).isEqualTo(ids.get(0));
        assertThat(post("/v1/events/" + theirs + "/redeliver", ACME, null, "").status())
                .isEqualTo(404);
        assertThat(post("/v1/events/evt_nothing/redeliver", ACME, null, "").status())
                .isEqualTo(404);

        assertThat(get("/v1/events?type=charge.exploded", ACME).problemType()).isEqualTo("validation-failed");
        assertThat(get("/v1/events?after=" + theirs, ACME).problemType())
                .as("another tenant's cursor")
                .isEqualTo("validation-failed");
        assertThat(get("/v1/events?after=nope", ACME).status()).isEqualTo(422);
        assertThat(get("/v1/events?limit=0", ACME).status()).isEqualTo(422);
    }

    @Test
    void theServicesWorkerDeliversARecordedEventSignedWithTheEndpointsSecret() throws IOException {
        List<byte[]> bodies = Collections.synchronizedList(new ArrayList<>());
        List<String> signatures = Collections.synchronizedList(new ArrayList<>());
        List<String> ids = Collections.synchronizedList(new ArrayList<>());
        HttpServer receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        receiver.createContext("/", exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                bodies.add(in.readAllBytes());
            }
            signatures.add(exchange.getRequestHeaders().getFirst(WebhookSignature.HEADER));
            ids.add(exchange.getRequestHeaders().getFirst("Exactly-Event-Id"));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        receiver.start();
        try {
            Answer created = createEndpoint(
                    GLOBEX,
                    "{\"url\":\"http://127.0.0.1:" + receiver.getAddress().getPort()
                            + "/hook\",\"enabled_events\":[\"charge.succeeded\"]}");
            String secret = created.json().get("secret").stringValue();
            record("globex", EventType.CHARGE_FAILED, "ch_not_listened");
            String event = record("globex", EventType.CHARGE_SUCCEEDED, "ch_delivered");
            await().atMost(Duration.ofSeconds(30)).until(() -> !ids.isEmpty());
            assertThat(ids).containsExactly(event);
            WebhookSignature.verify(
                    secret, signatures.getFirst(), bodies.getFirst(), WebhookSignature.DEFAULT_TOLERANCE);
            String stored = jdbc.queryOne(
                            "SELECT body FROM payments_event WHERE id = ?",
                            s -> s.setString(1, event),
                            rs -> rs.getString(1))
                    .orElseThrow();
            assertThat(new String(bodies.getFirst(), StandardCharsets.UTF_8)).isEqualTo(stored);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> get("/v1/events/" + event, GLOBEX)
                            .json()
                            .get("deliveries")
                            .get(0)
                            .get("status")
                            .stringValue()
                            .equals("delivered"));
        } finally {
            receiver.stop(0);
        }
    }
}
