package dev.exactly.psp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.client.RetryPolicy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PspSimulatorTest {

    private static final PspChargeRequest VISA = PspChargeRequest.of(1999, "usd", "tok_visa");

    private PspSimulator psp;
    private Http http;
    private PspClient client;

    @BeforeEach
    void start() {
        psp = PspSimulator.start();
        http = new Http(psp.baseUri());
        client = PspClient.builder(psp.baseUri())
                .requestTimeout(Duration.ofSeconds(10))
                .build();
    }

    @AfterEach
    void stop() {
        client.close();
        http.close();
        psp.close();
    }

    // ---------------------------------------------------------------- idempotency

    @Test
    void sameKeyAndBodyReplaysTheFirstAnswerWithoutASecondCapture() {
        HttpResponse<String> first = http.charge("order-17", Http.CHARGE);
        HttpResponse<String> second = http.charge("order-17", Http.CHARGE);

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(first.body())
                .contains(
                        "\"object\":\"psp_charge\"",
                        "\"status\":\"captured\"",
                        "\"idempotency_key\":\"order-17\"",
                        "\"amount\":1999",
                        "\"decline_code\":null");
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(second.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(psp.captureCount("order-17")).isEqualTo(1);
        assertThat(psp.stats())
                .returns(2L, PspStats::requests)
                .returns(1L, PspStats::captures)
                .returns(1L, PspStats::replays);
    }

    @Test
    void memberOrderAndCurrencyCaseDoNotMakeADifferentRequest() {
        http.charge("k", Http.CHARGE);
        HttpResponse<String> reordered = http.charge(
                "k",
                "{\"metadata\": {\"order\": \"17\"}, \"description\": \"order 17\", \"source\": \"tok_visa\","
                        + " \"currency\": \"USD\", \"amount\": 1999}");

        assertThat(reordered.statusCode()).isEqualTo(200);
        assertThat(reordered.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(psp.captureCount("k")).isEqualTo(1);
    }

    @Test
    void sameKeyWithADifferentBodyIs422AndCapturesNothingMore() {
        HttpResponse<String> first = http.charge("k", Http.CHARGE);
        HttpResponse<String> reused = http.charge("k", Http.CHARGE.replace("1999", "2000"));

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(reused.body()).contains("\"code\":\"idempotency_key_reused\"");
        assertThat(psp.captures()).hasSize(1).first().returns(1999L, Capture::amount);
        assertThatThrownBy(() -> client.charge(PspChargeRequest.of(5, "usd", "tok_visa"), "k"))
                .isInstanceOfSatisfying(PspRequestException.class, e -> {
                    assertThat(e.status()).isEqualTo(422);
                    assertThat(e.code()).isEqualTo("idempotency_key_reused");
                    assertThat(e.outcomeUnknown()).isFalse();
                });
    }

    @Test
    void thirtyTwoConcurrentRequestsWithOneKeyCaptureOnce() throws Exception {
        int n = 32;
        CountDownLatch ready = new CountDownLatch(n);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<HttpResponse<String>>> answers = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(n)) {
            for (int i = 0; i < n; i++) {
                answers.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    // the latency holds all 32 in flight together before any of them reaches the book
                    return http.charge("race", Http.CHARGE, Fault.HEADER, "latency=100ms");
                }));
            }
            ready.await();
            go.countDown();
            Set<String> bodies = new HashSet<>();
            for (Future<HttpResponse<String>> answer : answers) {
                HttpResponse<String> r = answer.get();
                assertThat(r.statusCode()).isEqualTo(200);
                bodies.add(r.body());
            }
            assertThat(bodies).hasSize(1);
        }
        assertThat(psp.captureCount("race")).isEqualTo(1);
        assertThat(psp.captures()).hasSize(1);
        assertThat(psp.stats())
                .returns(32L, PspStats::requests)
                .returns(1L, PspStats::captures)
                .returns(31L, PspStats::replays);
        assertThat(psp.stats().fired(FaultKind.LATENCY)).isEqualTo(32);
    }

    @Test
    void brokenProcessorCapturesEveryRequestSoACheckerCanCatchIt() {
        try (PspSimulator broken = PspSimulator.start(
                        PspConfig.custom().honourIdempotencyKeys(false).build());
                PspClient brokenClient = PspClient.create(broken.baseUri())) {
            PspCharge a = brokenClient.charge(VISA, "k");
            PspCharge b = brokenClient.charge(VISA, "k");

            assertThat(a.id()).isNotEqualTo(b.id());
            assertThat(broken.captureCount("k")).isEqualTo(2);
            assertThat(broken.captureCounts()).containsExactly(Map.entry("k", 2L));
        }
    }

    // ---------------------------------------------------------------- validation

    @Test
    void missingOrInvalidKeyIs400AndNothingIsRecorded() {
        HttpResponse<String> missing = http.post("/v1/charges", Http.CHARGE);
        HttpResponse<String> tooLong = http.charge("k".repeat(256), Http.CHARGE);

        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(missing.body()).contains("\"code\":\"idempotency_key_missing\"");
        assertThat(tooLong.statusCode()).isEqualTo(400);
        assertThat(tooLong.body()).contains("\"code\":\"idempotency_key_invalid\"");
        assertThat(psp.captures()).isEmpty();
        assertThat(psp.stats()).returns(2L, PspStats::rejected).returns(0L, PspStats::captures);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "{",
                "not json",
                "{\"amount\": 19.99, \"currency\": \"usd\", \"source\": \"tok_visa\"}",
                "{\"amount\": 1999, \"currency\": \"usd\", \"source\": \"tok_visa\",}",
                "[1999]"
            })
    void malformedJsonIs400AndTheKeyStaysUsable(String body) {
        HttpResponse<String> bad = http.charge("k", body);
        HttpResponse<String> fixed = http.charge("k", Http.CHARGE);

        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).containsAnyOf("\"code\":\"invalid_json\"", "\"code\":\"parameter_invalid\"");
        assertThat(fixed.statusCode()).isEqualTo(200);
        assertThat(fixed.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(psp.captureCount("k")).isEqualTo(1);
    }

    @Test
    void invalidParametersAre400WithACode() {
        assertThat(http.charge("a", "{\"amount\": -1, \"currency\": \"usd\", \"source\": \"tok_visa\"}")
                        .body())
                .contains("parameter_invalid", "amount");
        assertThat(http.charge("b", "{\"currency\": \"usd\", \"source\": \"tok_visa\"}")
                        .body())
                .contains("parameter_missing", "amount");
        assertThat(http.charge("c", "{\"amount\": 1, \"currency\": \"usd\", \"source\": \"tok_visa\", \"x\": 1}")
                        .body())
                .contains("parameter_unknown", "x");
        assertThat(http.charge("d", "{\"amount\": \"1\", \"currency\": \"usd\", \"source\": \"tok_visa\"}")
                        .statusCode())
                .isEqualTo(400);
        assertThat(http.charge(
                                "e",
                                "{\"amount\": 1, \"currency\": \"usd\", \"source\": \"tok_visa\", \"metadata\": {\"a\": 1}}")
                        .body())
                .contains("metadata.a must be a string");
        assertThat(http.charge("f", "\"x\"".repeat(1) + " ".repeat(70_000)).statusCode())
                .isEqualTo(413);
        assertThat(psp.captures()).isEmpty();
    }

    @Test
    void unknownRoutesAndMethods() {
        assertThat(http.get("/v2/nothing").statusCode()).isEqualTo(404);
        HttpResponse<String> wrongMethod = http.delete("/v1/charges");
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertThat(wrongMethod.headers().firstValue("Allow")).contains("GET, POST");
        assertThat(http.get("/health").body()).isEqualTo("{\"status\":\"ok\"}");
    }

    // ---------------------------------------------------------------- declines

    @Test
    void declineIsRecordedAndReplayedWithoutACapture() {
        String declinedBody = Http.CHARGE.replace("tok_visa", "tok_chargeDeclined");
        HttpResponse<String> first = http.charge("d", declinedBody);
        HttpResponse<String> retry = http.charge("d", declinedBody);

        assertThat(first.statusCode()).isEqualTo(402);
        assertThat(first.body()).contains("\"status\":\"declined\"", "\"decline_code\":\"card_declined\"");
        assertThat(retry.statusCode()).isEqualTo(402);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(psp.captures()).isEmpty();
        assertThat(psp.stats())
                .returns(1L, PspStats::declines)
                .returns(1L, PspStats::replays)
                .returns(0L, PspStats::captures);
        // a test-card decline is the processor's normal behaviour, not an injected fault
        assertThat(psp.stats().fired(FaultKind.DECLINE)).isZero();
    }

    @Test
    void declineRulesByAmountAndCardAndPerRequest() {
        psp.setFaults(FaultSettings.custom()
                .decline(DeclineRule.amount(6666, "do_not_honor"))
                .decline(DeclineRule.source("tok_visa_debit", "insufficient_funds"))
                .build());

        PspCharge byAmount = client.charge(PspChargeRequest.of(6666, "eur", "tok_visa"), "a");
        PspCharge byCard = client.charge(PspChargeRequest.of(100, "eur", "tok_visa_debit"), "b");
        PspCharge perRequest = client.charge(VISA, "c", List.of(Fault.decline("expired_card")));
        PspCharge builtIn = client.charge(PspChargeRequest.of(100, "eur", "tok_insufficientFunds"), "d");
        PspCharge fine = client.charge(PspChargeRequest.of(6667, "eur", "tok_visa"), "e");

        assertThat(List.of(byAmount, byCard, perRequest, builtIn))
                .extracting(PspCharge::status)
                .containsOnly(ChargeStatus.DECLINED);
        assertThat(List.of(byAmount, byCard, perRequest, builtIn))
                .extracting(PspCharge::declineCode)
                .containsExactly("do_not_honor", "insufficient_funds", "expired_card", "insufficient_funds");
        assertThat(fine.captured()).isTrue();
        assertThat(psp.captures()).extracting(Capture::idempotencyKey).containsExactly("e");
        assertThat(psp.stats().fired(FaultKind.DECLINE)).isEqualTo(3);
        assertThat(client.charge(PspChargeRequest.of(6666, "eur", "tok_visa"), "a"))
                .isEqualTo(byAmount);
    }

    // ---------------------------------------------------------------- lookups, log, stats

    @Test
    void lookupByKeyAndIdAndTheCaptureLog() {
        PspChargeRequest request = VISA.withDescription("order 17").withMetadata(Map.of("payment", "pay_1"));
        PspCharge charge = client.charge(request, "key with/slash & space");

        assertThat(client.findByIdempotencyKey("key with/slash & space")).contains(charge);
        assertThat(client.findByIdempotencyKey("never-used")).isEmpty();
        assertThat(psp.findByIdempotencyKey("key with/slash & space")).contains(charge);
        assertThat(http.get("/v1/charges/by-key/key%20with%2Fslash%20&%20space").body())
                .isEqualTo(http.get("/v1/charges?idempotency_key=key+with%2Fslash+%26+space")
                        .body())
                .isEqualTo(http.get("/v1/charges/" + charge.id()).body());
        assertThat(http.get("/v1/charges/py_missing").statusCode()).isEqualTo(404);
        assertThat(http.get("/v1/charges").statusCode()).isEqualTo(400);
        assertThat(charge)
                .returns("usd", PspCharge::currency)
                .returns("order 17", PspCharge::description)
                .returns(Map.of("payment", "pay_1"), PspCharge::metadata);

        List<Capture> captures = client.captures();
        assertThat(captures)
                .isEqualTo(psp.captures())
                .singleElement()
                .returns(1L, Capture::sequence)
                .returns(charge.id(), Capture::chargeId)
                .returns(1999L, Capture::amount)
                .returns(Map.of("payment", "pay_1"), Capture::metadata);
        assertThat(client.stats()).isEqualTo(psp.stats());

        psp.reset();
        assertThat(psp.captures()).isEmpty();
        assertThat(psp.stats().requests()).isZero();
        assertThat(client.findByIdempotencyKey("key with/slash & space")).isEmpty();
    }

    // ---------------------------------------------------------------- faults

    @Test
    void dropResponseCapturesThenTheLookupFindsItAndTheRetryReplaysIt() {
        // the fault rides on the header, so it fires on every attempt of the call: no answer ever comes
        assertThatThrownBy(() -> client.charge(VISA, "drop", List.of(Fault.dropResponse())))
                .isInstanceOfSatisfying(
                        PspConnectionException.class,
                        e -> assertThat(e.outcomeUnknown()).isTrue());
        assertThat(psp.stats().fired(FaultKind.DROP_RESPONSE))
                .isEqualTo(client.retryPolicy().maxAttempts());

        PspCharge found = client.findByIdempotencyKey("drop").orElseThrow();
        PspCharge retried = client.charge(VISA, "drop");

        assertThat(found.captured()).isTrue();
        assertThat(retried).isEqualTo(found);
        assertThat(psp.captureCount("drop")).isEqualTo(1);
        assertThat(psp.stats()).returns((long) client.retryPolicy().maxAttempts(), PspStats::replays);
    }

    @Test
    void aDroppedResponseIsRetriedWithTheSameKeyAndTheProcessorReplaysTheCapture() {
        psp.failNext(1, Fault.dropResponse());

        PspCharge charge = client.charge(VISA, "drop-once");

        assertThat(charge.captured()).isTrue();
        assertThat(charge.idempotencyKey()).isEqualTo("drop-once");
        assertThat(psp.captureCount("drop-once")).isEqualTo(1);
        assertThat(psp.stats().fired(FaultKind.DROP_RESPONSE)).isEqualTo(1);
        assertThat(psp.stats().replays())
                .as("the second attempt was answered from the first one's record")
                .isEqualTo(1);
    }

    @Test
    void aCallThatNeverConnectsIsNotCapturedButOneAfterAnAttemptThatMayHaveIsUnknown() throws Exception {
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        try (PspClient nowhere = PspClient.create(java.net.URI.create("http://127.0.0.1:" + closed))) {
            assertThatThrownBy(() -> nowhere.charge(VISA, "n"))
                    .isInstanceOfSatisfying(
                            PspUnavailableException.class,
                            e -> assertThat(e.outcomeUnknown()).isFalse());
        }
        psp.failNext(3, Fault.error(503));
        assertThatThrownBy(() -> client.charge(VISA, "u")).isInstanceOfSatisfying(PspServerException.class, e -> {
            assertThat(e.status()).isEqualTo(503);
            assertThat(e.outcomeUnknown()).isTrue();
        });
        assertThat(psp.stats().fired(FaultKind.ERROR)).isEqualTo(3);
        assertThat(client.charge(VISA, "u").captured()).isTrue();
    }

    @Test
    void timeoutBeforeCaptureLeavesNothingAndARetryCaptures() {
        try (PspClient impatient = PspClient.builder(psp.baseUri())
                .requestTimeout(Duration.ofMillis(300))
                .build()) {
            assertThatThrownBy(() -> impatient.charge(VISA, "t", List.of(Fault.timeout())))
                    .isInstanceOfSatisfying(
                            PspTimeoutException.class,
                            e -> assertThat(e.outcomeUnknown()).isTrue());

            assertThat(psp.stats().fired(FaultKind.TIMEOUT)).isEqualTo(1);
            assertThat(impatient.findByIdempotencyKey("t")).isEmpty();
            assertThat(psp.captureCount("t")).isZero();

            PspCharge retried = impatient.charge(VISA, "t");
            assertThat(retried.captured()).isTrue();
            assertThat(psp.captureCount("t")).isEqualTo(1);
        }
    }

    @Test
    void timeoutAfterCaptureLeavesOneCaptureThatTheRetryReplays() {
        try (PspClient impatient = PspClient.builder(psp.baseUri())
                .requestTimeout(Duration.ofMillis(300))
                .build()) {
            assertThatThrownBy(() -> impatient.charge(VISA, "t", List.of(Fault.timeoutAfterCapture())))
                    .isInstanceOf(PspTimeoutException.class);

            assertThat(psp.stats().fired(FaultKind.TIMEOUT_AFTER_CAPTURE)).isEqualTo(1);
            PspCharge found = impatient.findByIdempotencyKey("t").orElseThrow();
            assertThat(impatient.charge(VISA, "t")).isEqualTo(found);
            assertThat(psp.captureCount("t")).isEqualTo(1);
        }
    }

    @Test
    void aHangShorterThanTheClientTimeoutEndsIn504WithUnknownOutcome() {
        assertThatThrownBy(() -> client.charge(VISA, "t", List.of(Fault.timeoutAfterCapture(Duration.ofMillis(100)))))
                .isInstanceOfSatisfying(PspServerException.class, e -> {
                    assertThat(e.status()).isEqualTo(504);
                    assertThat(e.code()).isEqualTo("processor_timeout");
                    assertThat(e.outcomeUnknown()).isTrue();
                });
        assertThat(psp.captureCount("t")).isEqualTo(1);
    }

    @Test
    void runFaultsAfterCaptureFireAtTheirRates() {
        // one attempt per call, so that each fault fires once per call
        client.close();
        client = PspClient.builder(psp.baseUri())
                .retryPolicy(RetryPolicy.noRetries())
                .build();
        psp.setFaults(FaultSettings.custom().dropResponseRate(1.0).build());
        assertThatThrownBy(() -> client.charge(VISA, "a")).isInstanceOf(PspConnectionException.class);

        psp.setFaults(FaultSettings.custom()
                .timeoutAfterCaptureRate(1.0)
                .timeoutHold(Duration.ofMillis(50))
                .latency(Duration.ofMillis(20), Duration.ofMillis(30))
                .build());
        long start = System.nanoTime();
        assertThatThrownBy(() -> client.charge(VISA, "b"))
                .isInstanceOfSatisfying(
                        PspServerException.class, e -> assertThat(e.status()).isEqualTo(504));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(70));

        psp.clearFaults();
        assertThat(client.charge(VISA, "a").captured()).isTrue();
        assertThat(client.charge(VISA, "b").captured()).isTrue();
        assertThat(psp.captureCounts()).containsExactly(Map.entry("a", 1L), Map.entry("b", 1L));
        assertThat(psp.stats().faults())
                .containsEntry(FaultKind.DROP_RESPONSE, 1L)
                .containsEntry(FaultKind.TIMEOUT_AFTER_CAPTURE, 1L)
                .containsEntry(FaultKind.LATENCY, 1L)
                .containsEntry(FaultKind.ERROR, 0L);
        assertThat(psp.stats().replays()).isEqualTo(2);
    }

    @Test
    void closingEndsHangingRequestsAtOnce() throws Exception {
        PspSimulator hanging = PspSimulator.start(PspConfig.custom()
                .faults(FaultSettings.custom()
                        .timeoutRate(1.0)
                        .timeoutHold(Fault.MAX_DELAY)
                        .build())
                .build());
        try (PspClient patient = PspClient.builder(hanging.baseUri())
                        .requestTimeout(Duration.ofSeconds(60))
                        .build();
                ExecutorService pool = Executors.newSingleThreadExecutor()) {
            Future<PspCharge> call = pool.submit(() -> patient.charge(VISA, "h"));
            await().atMost(Duration.ofSeconds(5)).until(() -> hanging.stats().fired(FaultKind.TIMEOUT) == 1);

            long start = System.nanoTime();
            hanging.close();

            assertThatThrownBy(call::get).cause().isInstanceOf(PspConnectionException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
            assertThat(hanging.captures()).isEmpty();
        }
    }

    @Test
    void seededErrorRateFiresRoughlyItsShareNeverCapturesAndRepeats() {
        FaultSettings faults = FaultSettings.custom().errorRate(0.3).seed(7).build();
        List<Boolean> firstRun = errorPattern(psp, faults, 300);
        PspStats stats = psp.stats();
        long errors = firstRun.stream().filter(e -> e).count();

        assertThat(errors).isBetween(60L, 120L);
        assertThat(stats.fired(FaultKind.ERROR)).isEqualTo(errors);
        assertThat(stats.captures()).isEqualTo(300 - errors);
        for (int i = 0; i < firstRun.size(); i++) {
            assertThat(psp.captureCount("e" + i)).isEqualTo(firstRun.get(i) ? 0 : 1);
        }
        try (PspSimulator again = PspSimulator.start()) {
            assertThat(errorPattern(again, faults, 300)).isEqualTo(firstRun);
        }
    }

    private static List<Boolean> errorPattern(PspSimulator target, FaultSettings faults, int n) {
        target.setFaults(faults);
        List<Boolean> errors = new ArrayList<>();
        try (PspClient c = PspClient.create(target.baseUri())) {
            for (int i = 0; i < n; i++) {
                try {
                    c.charge(VISA, "e" + i);
                    errors.add(false);
                } catch (PspServerException e) {
                    assertThat(e.status()).isEqualTo(500);
                    assertThat(e.code()).isEqualTo("processing_error");
                    errors.add(true);
                }
            }
        }
        return errors;
    }

    @Test
    void perRequestHeaderFaults() {
        HttpResponse<String> error = http.charge("p", Http.CHARGE, Fault.HEADER, "error=503");
        assertThat(error.statusCode()).isEqualTo(503);
        assertThat(error.headers().firstValue("Psp-Fault-Fired")).contains("error");
        assertThat(psp.findByIdempotencyKey("p")).isEmpty();

        long start = System.nanoTime();
        HttpResponse<String> slow = http.charge("p", Http.CHARGE, Fault.HEADER, "latency=200ms");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        assertThat(slow.statusCode()).isEqualTo(200);
        assertThat(slow.headers().firstValue("Psp-Fault-Fired")).contains("latency");

        HttpResponse<String> invalid = http.charge("q", Http.CHARGE, Fault.HEADER, "explode");
        assertThat(invalid.statusCode()).isEqualTo(400);
        assertThat(invalid.body()).contains("fault_invalid", "explode");

        assertThat(psp.captureCount("p")).isEqualTo(1);
        assertThat(psp.stats().faults()).containsEntry(FaultKind.ERROR, 1L).containsEntry(FaultKind.LATENCY, 1L);
    }

    @Test
    void failNextCountsDown() {
        psp.failNext(2, Fault.error());
        assertThat(psp.pendingFaults()).isEqualTo(2);

        assertThatThrownBy(() -> client.charge(VISA, "n")).isInstanceOf(PspServerException.class);
        assertThatThrownBy(() -> client.charge(VISA, "n")).isInstanceOf(PspServerException.class);
        assertThat(client.charge(VISA, "n").captured()).isTrue();
        assertThat(psp.pendingFaults()).isZero();
        assertThat(psp.captureCount("n")).isEqualTo(1);
        assertThat(psp.stats().fired(FaultKind.ERROR)).isEqualTo(2);
    }

    @Test
    void adminEndpointSetsShowsAndClearsFaults() {
        HttpResponse<String> set = http.post(
                "/v1/faults",
                "{\"error_rate_bps\": 10000, \"error_status\": 502, \"declines\": [{\"amount\": 13, \"code\": \"do_not_honor\"}]}");
        assertThat(set.statusCode()).isEqualTo(200);
        assertThat(set.body()).contains("\"error_rate_bps\":10000", "\"error_status\":502");
        assertThat(psp.faults().errorRate()).isEqualTo(1.0);
        assertThat(psp.faults().declines()).containsExactly(DeclineRule.amount(13, "do_not_honor"));
        assertThat(http.charge("a", Http.CHARGE).statusCode()).isEqualTo(502);

        assertThat(http.delete("/v1/faults").statusCode()).isEqualTo(200);
        assertThat(psp.faults()).isEqualTo(FaultSettings.none());
        assertThat(http.charge("a", Http.CHARGE).statusCode()).isEqualTo(200);

        HttpResponse<String> next = http.post("/v1/faults/next", "{\"count\": 1, \"faults\": \"drop-response\"}");
        assertThat(next.body()).contains("\"pending_next\":1");
        assertThat(client.charge(VISA, "b").captured())
                .as("the client retried the dropped answer")
                .isTrue();
        assertThat(psp.stats().fired(FaultKind.DROP_RESPONSE)).isEqualTo(1);
        assertThat(psp.captureCount("b")).isEqualTo(1);
        assertThat(http.get("/v1/faults").body()).contains("\"pending_next\":0");

        assertThat(http.post("/v1/faults", "{\"error_rate_bps\": 10001}").statusCode())
                .isEqualTo(400);
        assertThat(http.post("/v1/faults", "{\"eror_rate_bps\": 1}").body()).contains("parameter_unknown");
        assertThat(http.post("/v1/faults/next", "{\"count\": 1, \"faults\": \"nope\"}")
                        .statusCode())
                .isEqualTo(400);
        assertThat(psp.faults()).isEqualTo(FaultSettings.none());
    }

    @Test
    void statsEndpointCountsFaultsByKind() {
        http.charge("s", Http.CHARGE, Fault.HEADER, "latency=1ms, error");
        String stats = http.get("/v1/stats").body();

        assertThat(stats)
                .contains("\"requests\":1", "\"captures\":0", "\"latency\":1", "\"error\":1", "\"drop-response\":0");
    }

    @Test
    void unreachableProcessorIsADefiniteFailure() {
        PspSimulator gone = PspSimulator.start();
        gone.close();
        try (PspClient c = PspClient.builder(gone.baseUri())
                .connectTimeout(Duration.ofSeconds(1))
                .build()) {
            assertThatThrownBy(() -> c.charge(VISA, "u"))
                    .isInstanceOfSatisfying(
                            PspUnavailableException.class,
                            e -> assertThat(e.outcomeUnknown()).isFalse());
        }
    }
}
