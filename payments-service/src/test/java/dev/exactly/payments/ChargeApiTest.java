package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import tools.jackson.databind.JsonNode;

/** The API over real HTTP with the in-memory hot tier: charges, declines, queries, errors, tenants, OpenAPI. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ChargeApiTest extends DefaultServiceTest {

    @Autowired
    @org.springframework.beans.factory.annotation.Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    @Autowired
    org.springframework.context.ApplicationContext context;

    @Test
    void theHotTierIsTheStartersFilter() {
        assertThat(context.getBeanNamesForType(dev.exactly.idempotency.spring.boot.IdempotencyAutoConfiguration.class))
                .hasSize(1);
        var registration = context.getBean(
                "idempotencyFilterRegistration", org.springframework.boot.web.servlet.FilterRegistrationBean.class);
        var filter = (dev.exactly.idempotency.servlet.IdempotencyFilter) registration.getFilter();
        assertThat(filter.routes())
                .extracting(dev.exactly.idempotency.servlet.IdempotentRoute::pathTemplate)
                .containsExactlyInAnyOrder(
                        "/v1/charges", "/v1/refunds", "/v1/charges/{id}/capture", "/v1/charges/{id}/void");
        assertThat(context.getBean(dev.exactly.idempotency.spi.IdempotencyStore.class))
                .isInstanceOf(dev.exactly.idempotency.memory.InMemoryIdempotencyStore.class);
    }

    @Test
    void aChargeIsCapturedJournaledAndReplayedByteForByte() {
        String body = "{\"amount\":1999,\"currency\":\"usd\",\"customer\":\"cus_happy\",\"description\":\"Order 42\","
                + "\"metadata\":{\"order\":\"42\"}}";
        Answer first = post("/v1/charges", ACME, "happy-1", body);
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        JsonNode charge = first.json();
        String id = charge.get("id").stringValue();
        assertThat(charge.get("status").stringValue()).isEqualTo("succeeded");
        assertThat(charge.get("amount").longValue()).isEqualTo(1999);
        assertThat(charge.get("metadata").get("order").stringValue()).isEqualTo("42");
        assertThat(first.header("Location")).isEqualTo("/v1/charges/" + id);
        assertThat(first.header("Idempotent-Replayed")).isEmpty();
        // written by the controller itself, as Spring MVC's entity path wrote it: the media type as it is,
        // the length, and the security headers of the filter chain
        assertThat(first.headers().allValues("Content-Type")).containsExactly("application/json");
        assertThat(first.header("Content-Length")).isEqualTo(Integer.toString(first.body().length));
        assertThat(first.header("X-Content-Type-Options")).isEqualTo("nosniff");
        assertThat(first.header("Cache-Control")).contains("no-store");
        assertThat(first.header("Idempotency-Expires")).isNotEmpty();

        // the same request again, members reordered and spaced: a replay, not a second charge
        Answer again = post(
                "/v1/charges",
                ACME,
                "\"happy-1\"",
                "{ \"customer\":\"cus_happy\", \"metadata\":{\"order\":\"42\"}, \"currency\":\"usd\", \"amount\":1999,"
                        + " \"description\":\"Order 42\" }");
        assertThat(again.status()).isEqualTo(201);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(again.header("X-Idempotent-Replay")).isEqualTo("true");

        String downstream = "exactly_" + id;
        assertThat(psp().captureCount(downstream)).isEqualTo(1);
        assertThat(entriesOf(id)).isEqualTo(1);

        Answer read = get("/v1/charges/" + id, ACME);
        assertThat(read.status()).isEqualTo(200);
        assertThat(read.json().get("status").stringValue()).isEqualTo("succeeded");
        Answer list = get("/v1/charges?customer=cus_happy", ACME);
        assertThat(list.json().get("data").get(0).get("id").stringValue()).isEqualTo(id);

        Answer balance = get("/v1/customers/cus_happy/balance", ACME);
        assertThat(balance.json().get("available").get(0).get("amount").longValue())
                .isEqualTo(1999);
        Answer entries = get("/v1/ledger/entries?account=customer:cus_happy:usd", ACME);
        assertThat(entries.status()).as(entries.text()).isEqualTo(200);
        assertThat(entries.json().get("data").get(0).get("reference").stringValue())
                .isEqualTo("charge:" + id);
        Answer trial = get("/v1/ledger/trial-balance", ACME);
        assertThat(trial.json().get("balanced").booleanValue()).isTrue();

        Answer key = get("/v1/idempotency-keys/happy-1", ACME);
        assertThat(key.status()).isEqualTo(200);
        assertThat(key.json().get("status").stringValue()).isEqualTo("completed");
        assertThat(key.json().get("recovery_point").stringValue()).isEqualTo("finished");
        // replays are counted off the request path
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(get("/v1/idempotency-keys/happy-1", ACME)
                                .json()
                                .get("replay_count")
                                .longValue())
                        .isEqualTo(1));
        assertThat(key.json().get("resource").get("id").stringValue()).isEqualTo(id);
        assertThat(key.json().get("created").isString()).isTrue();
        assertThat(key.json().get("expires").isString()).isTrue();
        assertLedgerBalanced();
    }

    @Test
    void aKeyThatCannotBeAPathSegmentIsLookedUpByQuery() {
        // a key may hold '/', '?', '%' or spaces; an encoded slash in a path is refused by the server before
        // any route sees it, so the key is also found by ?key=, percent-encoded as any query value
        String key = "orders/42?retry=1 %x";
        Answer charged = post("/v1/charges", ACME, key, charge(300, "cus_slash_key"));
        assertThat(charged.status()).as(charged.text()).isEqualTo(201);
        String encoded = java.net.URLEncoder.encode(key, java.nio.charset.StandardCharsets.UTF_8);
        Answer found = get("/v1/idempotency-keys?key=" + encoded, ACME);
        assertThat(found.status()).as(found.text()).isEqualTo(200);
        assertThat(found.json().get("key").stringValue()).isEqualTo(key);
        assertThat(found.json().get("resource").get("id").stringValue())
                .isEqualTo(charged.json().get("id").stringValue());
        assertThat(get("/v1/idempotency-keys?key=" + encoded, GLOBEX).status())
                .as("another tenant's")
                .isEqualTo(404);
        Answer missing = get("/v1/idempotency-keys", ACME);
        assertThat(missing.status()).as(missing.text()).isEqualTo(422);
        assertThat(missing.problemType()).isEqualTo("validation-failed");
        assertThat(missing.text()).contains("key");
        Answer twice = get("/v1/idempotency-keys?key=a&key=b", ACME);
        assertThat(twice.status()).as(twice.text()).isEqualTo(422);
        assertThat(twice.text()).contains("more than once");
        // the value is the key itself, as the answer's "key" shows it: no header syntax (quotes, lists) applies
        Answer quoted = get(
                "/v1/idempotency-keys?key="
                        + java.net.URLEncoder.encode("\"" + key + "\"", java.nio.charset.StandardCharsets.UTF_8),
                ACME);
        assertThat(quoted.status()).as(quoted.text()).isEqualTo(404);
        Answer empty = get("/v1/idempotency-keys?key=", ACME);
        assertThat(empty.status()).as(empty.text()).isEqualTo(400);
        assertThat(empty.problemType()).isEqualTo("idempotency-key-invalid");
    }

    @Test
    void aDeclineIsA402RecordedAsFailedAndReplayedWithoutCallingTheProcessorAgain() {
        Answer first = post(
                "/v1/charges", ACME, "decline-1", charge(700, "cus_decline", "tok_chargeDeclinedInsufficientFunds"));
        assertThat(first.status()).isEqualTo(402);
        assertThat(first.header("Content-Type")).startsWith("application/problem+json");
        assertThat(first.problemType()).isEqualTo("card-declined");
        assertThat(first.json().get("decline_code").stringValue()).isEqualTo("insufficient_funds");
        String id = first.json().get("charge").stringValue();
        long requests = psp().stats().requests();

        Answer replay = post(
                "/v1/charges", ACME, "decline-1", charge(700, "cus_decline", "tok_chargeDeclinedInsufficientFunds"));
        assertThat(replay.status()).isEqualTo(402);
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(psp().stats().requests()).as("no second processor call").isEqualTo(requests);
        assertThat(chargeStatus(id)).isEqualTo("failed");
        assertThat(entriesOf(id)).isZero();
        assertThat(get("/v1/idempotency-keys/decline-1", ACME)
                        .json()
                        .get("status")
                        .stringValue())
                .isEqualTo("failed");
    }

    @Test
    void tenantsAreIsolated() {
        assertThat(post("/v1/charges", ACME, "iso-prior-1", charge(100, "cus_iso_prior"))
                        .status())
                .isEqualTo(201);
        Answer acme = post("/v1/charges", ACME, "shared-key", charge(100, "cus_iso"));
        assertThat(acme.status()).isEqualTo(201);
        String id = acme.json().get("id").stringValue();
        // the same key from another tenant is another scope: a new charge, not acme's replay
        Answer globex = post("/v1/charges", GLOBEX, "shared-key", charge(100, "cus_iso"));
        assertThat(globex.status()).isEqualTo(201);
        assertThat(globex.header("Idempotent-Replayed")).isEmpty();
        assertThat(globex.json().get("id").stringValue()).isNotEqualTo(id);

        assertThat(get("/v1/charges/" + id, GLOBEX).status()).isEqualTo(404);
        assertThat(get("/v1/charges?customer=cus_iso", GLOBEX)
                        .json()
                        .get("data")
                        .size())
                .isEqualTo(1);
        // acme's charge is no page mark of globex's list, nor of another customer's, nor is garbage: each used
        // to be an empty last page, which a client paging through takes for the end
        for (Answer page : List.of(
                get("/v1/charges?customer=cus_iso&starting_after=" + id, GLOBEX),
                get("/v1/charges?customer=cus_other&starting_after=" + id, ACME),
                get("/v1/charges?customer=cus_iso&starting_after=ch_garbage", ACME))) {
            assertThat(page.status()).as(page.text()).isEqualTo(422);
            assertThat(page.text()).contains("starting_after");
        }
        assertThat(get("/v1/charges?customer=cus_iso&starting_after=" + id, ACME)
                        .status())
                .isEqualTo(200);
        // another customer's charge marks no page of this one's, even where this one has charges older than it
        Answer foreign = get("/v1/charges?customer=cus_iso_prior&starting_after=" + id, ACME);
        assertThat(foreign.status()).as(foreign.text()).isEqualTo(422);
        assertThat(get("/v1/customers/cus_iso/balance", GLOBEX)
                        .json()
                        .get("available")
                        .get(0)
                        .get("amount")
                        .longValue())
                .isEqualTo(100);
        assertThat(get("/v1/idempotency-keys/shared-key", GLOBEX)
                        .json()
                        .get("resource")
                        .get("id")
                        .stringValue())
                .isNotEqualTo(id);
        Answer refund = post("/v1/refunds", GLOBEX, "iso-refund", "{\"charge\":\"" + id + "\",\"amount\":50}");
        assertThat(refund.status()).isEqualTo(404);
        JsonNode globexTrial = get("/v1/ledger/trial-balance", GLOBEX).json();
        for (JsonNode line : globexTrial.get("lines")) {
            assertThat(line.get("account").stringValue()).doesNotContain("acme");
        }
        assertThat(get("/v1/operator/requests", ACME).status()).isEqualTo(403);
        assertThat(get("/v1/charges/" + id, OPERATOR).status()).isEqualTo(403);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "not json                 | {amount:1                                                       | 422 | validation-failed",
                "array                    | [1,2]                                                           | 422 | validation-failed",
                "empty                    | ''                                                              | 422 | validation-failed",
                "amount as text           | {\"amount\":\"5\",\"currency\":\"usd\",\"customer\":\"c\"}       | 422 | validation-failed",
                "fractional amount        | {\"amount\":5.5,\"currency\":\"usd\",\"customer\":\"c\"}         | 422 | validation-failed",
                "zero amount              | {\"amount\":0,\"currency\":\"usd\",\"customer\":\"c\"}           | 422 | validation-failed",
                "huge amount              | {\"amount\":99999999999999999999,\"currency\":\"usd\",\"customer\":\"c\"} | 422 | validation-failed",
                "unknown currency         | {\"amount\":5,\"currency\":\"xyz\",\"customer\":\"c\"}           | 422 | validation-failed",
                "bad customer             | {\"amount\":5,\"currency\":\"usd\",\"customer\":\"a b\"}         | 422 | validation-failed",
                "unknown member           | {\"amount\":5,\"currency\":\"usd\",\"customer\":\"c\",\"x\":1}   | 422 | validation-failed",
                "duplicate member         | {\"amount\":5,\"amount\":6,\"currency\":\"usd\",\"customer\":\"c\"} | 422 | validation-failed",
                "metadata not strings     | {\"amount\":5,\"currency\":\"usd\",\"customer\":\"c\",\"metadata\":{\"a\":1}} | 422 | validation-failed",
            })
    void badInputIsAProblemWithAStableTypeAndIsNotRecorded(String name, String body, int status, String type) {
        String key = "bad-" + name.replace(' ', '-');
        Answer bad = post("/v1/charges", ACME, key, body);
        assertThat(bad.status()).as(bad.text()).isEqualTo(status);
        assertThat(bad.header("Content-Type")).startsWith("application/problem+json");
        assertThat(bad.problemType()).isEqualTo(type);
        assertThat(bad.json().get("errors").size()).isPositive();
        // not recorded: the same key with a fixed body runs
        Answer fixed = post("/v1/charges", ACME, key, charge(5, "cus_fixed"));
        assertThat(fixed.status()).as(fixed.text()).isEqualTo(201);
    }

    @Test
    void protocolErrorsAreProblemsNeverA500() {
        Answer missingKey = post("/v1/charges", ACME, null, charge(5, "c"));
        assertThat(missingKey.status()).isEqualTo(400);
        assertThat(missingKey.problemType()).isEqualTo("idempotency-key-missing");
        Answer badKey = post("/v1/charges", ACME, "x".repeat(300), charge(5, "c"));
        assertThat(badKey.status()).isEqualTo(400);
        assertThat(badKey.problemType()).isEqualTo("idempotency-key-invalid");
        Answer noAuth = post("/v1/charges", null, "k", charge(5, "c"));
        assertThat(noAuth.status()).isEqualTo(401);
        assertThat(noAuth.problemType()).isEqualTo("unauthorized");
        assertThat(noAuth.header("WWW-Authenticate")).isEqualTo("Bearer");
        assertThat(post("/v1/charges", "sk_wrong", "k", charge(5, "c")).status())
                .isEqualTo(401);

        List<Answer> answers = List.of(
                get("/v1/charges/ch_missing", ACME),
                get("/v1/charges", ACME),
                get("/v1/charges?customer=a%20b", ACME),
                get("/v1/charges?customer=c&limit=0", ACME),
                get("/v1/charges?customer=c&limit=abc", ACME),
                get("/v1/ledger/entries?after=-1", ACME),
                get("/v1/ledger/entries?account=nonsense", ACME),
                get("/v1/ledger/entries?currency=zzz", ACME),
                get("/v1/idempotency-keys/never-used", ACME),
                get("/v1/customers/a%20b/balance", ACME),
                get("/v1/operator/requests?state=weird", OPERATOR),
                post("/v1/operator/requests/ch_missing/retry", OPERATOR, null, ""),
                post("/v1/operator/requests/ch_missing/resolve", OPERATOR, null, "{\"outcome\":\"maybe\"}"),
                post("/v1/refunds", ACME, "refund-bad", "{\"charge\":1}"),
                get("/v1/nothing-here", ACME),
                send(HttpRequest.newBuilder(uri("/v1/charges/x"))
                        .header("Authorization", "Bearer " + ACME)
                        .DELETE()
                        .build()));
        for (Answer a : answers) {
            assertThat(a.status()).as(a.text()).isBetween(400, 499);
            assertThat(a.header("Content-Type")).as(a.text()).startsWith("application/problem+json");
            assertThat(a.json().get("type").stringValue()).startsWith("https://exactly.dev/problems/");
        }
    }

    @Test
    void aQueryParameterGivenEmptyIsRefusedNotTakenForAbsent() {
        // an unset variable in a client's query (?after=${cursor}) would otherwise read the first page again
        record Case(String empty, String absent, String apiKey, String field) {}
        List<Case> cases = List.of(
                new Case("/v1/charges?customer=c&limit=", "/v1/charges?customer=c", ACME, "limit"),
                new Case("/v1/charges?customer=c&starting_after=", "/v1/charges?customer=c", ACME, "starting_after"),
                new Case("/v1/ledger/entries?after=", "/v1/ledger/entries", ACME, "after"),
                new Case("/v1/ledger/entries?account=", "/v1/ledger/entries", ACME, "account"),
                new Case("/v1/ledger/entries?currency=", "/v1/ledger/entries", ACME, "currency"),
                new Case("/v1/ledger/entries?limit=", "/v1/ledger/entries", ACME, "limit"),
                new Case("/v1/events?after=", "/v1/events", ACME, "after"),
                new Case("/v1/events?type=", "/v1/events", ACME, "type"),
                new Case("/v1/events?limit=", "/v1/events", ACME, "limit"),
                new Case("/v1/operator/requests?state=", "/v1/operator/requests", OPERATOR, "state"),
                new Case("/v1/operator/requests?limit=", "/v1/operator/requests", OPERATOR, "limit"),
                new Case("/v1/operator/reconciliation?from=", "/v1/operator/reconciliation", OPERATOR, "from"),
                new Case("/v1/operator/reconciliation?to=", "/v1/operator/reconciliation", OPERATOR, "to"));
        for (Case c : cases) {
            Answer empty = get(c.empty(), c.apiKey());
            assertThat(empty.status()).as(c.empty() + ": " + empty.text()).isEqualTo(422);
            assertThat(empty.problemType()).isEqualTo("validation-failed");
            JsonNode error = empty.json().get("errors").get(0);
            assertThat(error.get("field").stringValue()).as(c.empty()).isEqualTo(c.field());
            assertThat(error.get("message").stringValue())
                    .as(c.empty())
                    .startsWith(c.field() + " must be ")
                    .contains("given empty");
            assertThat(get(c.absent(), c.apiKey()).status()).as(c.absent()).isEqualTo(200);
        }
        // a value that is given is read as before
        assertThat(get("/v1/ledger/entries?after=0&limit=5&currency=usd", ACME).status())
                .isEqualTo(200);
    }

    @Test
    void theApiKeepsNoSessionAndRefusesWithoutAKeyAsBefore() {
        // no session, anonymous or URL-rewriting filter runs: nothing sets a cookie, and a request without
        // a key is refused by authorization through the same entry point (401, "Bearer"), whatever the path
        Answer created = post("/v1/charges", ACME, "stateless-1", charge(5, "cus_stateless"));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        for (Answer a : List.of(
                created,
                post("/v1/charges", null, "stateless-2", charge(5, "c")),
                get("/v1/operator/requests", null),
                get("/actuator/prometheus", null),
                get("/elsewhere", null),
                get("/v1/operator/requests", ACME))) {
            assertThat(a.headers().allValues("Set-Cookie")).as(a.text()).isEmpty();
            if (a.status() != 201) {
                assertThat(a.header("Content-Type")).as(a.text()).startsWith("application/problem+json");
            }
        }
        for (String path : List.of("/v1/charges/ch_x", "/v1/operator/requests", "/actuator/prometheus", "/elsewhere")) {
            Answer refused = get(path, null);
            assertThat(refused.status()).as(path).isEqualTo(401);
            assertThat(refused.problemType()).isEqualTo("unauthorized");
            assertThat(refused.header("WWW-Authenticate")).isEqualTo("Bearer");
        }
        Answer forbidden = get("/v1/operator/requests", ACME);
        assertThat(forbidden.status()).isEqualTo(403);
        assertThat(get("/openapi.yaml", null).status()).isEqualTo(200);
    }

    @Test
    void theBearerSchemeIsCaseInsensitiveAndTheKeyExact() {
        for (String scheme : List.of("Bearer", "bearer", "BEARER", "bEaReR")) {
            Answer ok = send(HttpRequest.newBuilder(uri("/v1/charges?customer=c"))
                    .header("Authorization", scheme + " " + ACME)
                    .GET()
                    .build());
            assertThat(ok.status()).as(scheme).isEqualTo(200);
        }
        for (String value : List.of(
                "Bearer",
                "Basic " + ACME,
                "Bearer" + ACME,
                "Bearer " + ACME + "x",
                "Bearer " + ACME.toUpperCase(java.util.Locale.ROOT),
                "Token " + ACME)) {
            Answer refused = send(HttpRequest.newBuilder(uri("/v1/charges?customer=c"))
                    .header("Authorization", value)
                    .GET()
                    .build());
            assertThat(refused.status()).as(value).isEqualTo(401);
            assertThat(refused.header("WWW-Authenticate")).as(value).isEqualTo("Bearer error=\"invalid_token\"");
        }
    }

    @Test
    void openApiDocumentIsServedAndDocumentsEveryEndpoint() {
        Answer doc = get("/openapi.yaml", null);
        assertThat(doc.status()).isEqualTo(200);
        assertThat(doc.text()).startsWith("openapi: 3.1.0");
        assertThat(doc.header("Content-Type")).startsWith("application/yaml");
        Set<String> documented = new LinkedHashSet<>();
        Matcher m = Pattern.compile("(?m)^  (/v1/\\S+):$").matcher(doc.text());
        while (m.find()) {
            documented.add(m.group(1));
        }
        Set<String> served = new LinkedHashSet<>();
        mappings.getHandlerMethods().keySet().forEach(info -> served.addAll(info.getPatternValues()));
        served.removeIf(p -> !p.startsWith("/v1/"));
        assertThat(served).isNotEmpty();
        assertThat(documented).containsExactlyInAnyOrderElementsOf(served);
    }

    @Test
    void aDoubleClickChargesOnceAndBothClicksGetTheCharge() throws Exception {
        List<java.util.concurrent.Future<Answer>> clicks = new java.util.ArrayList<>();
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 2; i++) {
                clicks.add(pool.submit(() -> {
                    go.await();
                    return post("/v1/charges", ACME, "double-click", charge(2500, "cus_click"));
                }));
            }
            go.countDown();
            Answer a = clicks.get(0).get(30, java.util.concurrent.TimeUnit.SECONDS);
            Answer b = clicks.get(1).get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(a.status()).isEqualTo(201);
            assertThat(b.status()).isEqualTo(201);
            assertThat(a.body()).isEqualTo(b.body());
            assertThat(psp().captureCount("exactly_" + a.json().get("id").stringValue()))
                    .isEqualTo(1);
        }
    }
}
