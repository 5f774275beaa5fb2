package dev.exactly.psp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.client.RetryPolicy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code POST /v1/refunds} over real HTTP: one refund per key, never more than was captured, faults. */
class RefundTest {

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

    private static String refundBody(String chargeId, long amount) {
        return "{\"charge\": \"" + chargeId + "\", \"amount\": " + amount + ", \"currency\": \"usd\","
                + " \"reason\": \"requested_by_customer\", \"metadata\": {\"refund\": \"rf_1\"}}";
    }

    private static long refunded(List<Refund> refunds) {
        return refunds.stream().mapToLong(Refund::amount).sum();
    }

    @Test
    void sameKeyAndBodyReplaysTheFirstAnswerWithoutASecondRefund() {
        PspCharge charge = client.charge(VISA, "c");

        HttpResponse<String> first = http.keyed("/v1/refunds", "r1", refundBody(charge.id(), 500));
        HttpResponse<String> second = http.keyed(
                "/v1/refunds",
                "r1",
                "{\"metadata\": {\"refund\": \"rf_1\"}, \"currency\": \"USD\", \"amount\": 500,"
                        + " \"reason\": \"requested_by_customer\", \"charge\": \"" + charge.id() + "\"}");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(first.body())
                .contains(
                        "\"object\":\"psp_refund\"",
                        "\"status\":\"succeeded\"",
                        "\"charge\":\"" + charge.id() + "\"",
                        "\"amount\":500",
                        "\"idempotency_key\":\"r1\"",
                        "\"failure_code\":null");
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(second.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(psp.refunds())
                .singleElement()
                .returns("r1", Refund::idempotencyKey)
                .returns(charge.id(), Refund::chargeId)
                .returns(500L, Refund::amount)
                .returns(Map.of("refund", "rf_1"), Refund::metadata);
        assertThat(psp.findById(charge.id()).orElseThrow())
                .returns(500L, PspCharge::amountRefunded)
                .returns(1499L, PspCharge::refundable)
                .returns(ChargeStatus.CAPTURED, PspCharge::status);
        assertThat(psp.stats().operation(PspOperation.REFUND))
                .returns(2L, OperationStats::requests)
                .returns(1L, OperationStats::succeeded)
                .returns(1L, OperationStats::replays);
        assertThat(psp.stats().operation(PspOperation.CHARGE).requests()).isEqualTo(1);
    }

    @Test
    void sameKeyWithADifferentBodyIs422AndRefundsNothingMore() {
        PspCharge charge = client.charge(VISA, "c");
        client.refund(PspRefundRequest.of(charge.id(), 500, "usd"), "r");

        HttpResponse<String> reused = http.keyed("/v1/refunds", "r", refundBody(charge.id(), 600));

        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(reused.body()).contains("\"code\":\"idempotency_key_reused\"");
        assertThatThrownBy(() -> client.refund(PspRefundRequest.of(charge.id(), 700, "usd"), "r"))
                .isInstanceOfSatisfying(PspRequestException.class, e -> {
                    assertThat(e.code()).isEqualTo("idempotency_key_reused");
                    assertThat(e.outcomeUnknown()).isFalse();
                });
        assertThat(refunded(psp.refunds())).isEqualTo(500);
        assertThat(psp.stats().operation(PspOperation.REFUND).rejected()).isEqualTo(2);
    }

    @Test
    void thirtyTwoConcurrentRefundsWithOneKeyRefundOnce() throws Exception {
        PspCharge charge = client.charge(VISA, "c");

        // the latency holds all 32 in flight together before any of them reaches the book
        List<HttpResponse<String>> answers = Race.run(
                32,
                () -> http.keyed("/v1/refunds", "race", refundBody(charge.id(), 300), Fault.HEADER, "latency=100ms"));

        assertThat(answers).extracting(HttpResponse::statusCode).containsOnly(200);
        assertThat(answers)
                .extracting(HttpResponse::body)
                .containsOnly(answers.get(0).body());
        assertThat(psp.refunds()).singleElement().returns(300L, Refund::amount);
        assertThat(psp.findById(charge.id()).orElseThrow().amountRefunded()).isEqualTo(300);
        assertThat(psp.stats().operation(PspOperation.REFUND))
                .returns(32L, OperationStats::requests)
                .returns(1L, OperationStats::succeeded)
                .returns(31L, OperationStats::replays);
        assertThat(psp.stats().fired(PspOperation.REFUND, FaultKind.LATENCY)).isEqualTo(32);
    }

    @Test
    void concurrentRefundsWithDifferentKeysNeverAddUpToMoreThanTheCapture() throws Exception {
        PspCharge charge = client.charge(VISA, "c");
        List<Callable<PspRefund>> refunds = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String key = "part-" + i;
            refunds.add(() -> client.refund(PspRefundRequest.of(charge.id(), 200, "usd"), key));
        }

        List<PspRefund> answers = Race.run(refunds);

        assertThat(answers.stream().filter(PspRefund::succeeded))
                .as("1999 holds nine refunds of 200")
                .hasSize(9);
        assertThat(answers.stream().filter(r -> !r.succeeded()))
                .extracting(PspRefund::failureCode)
                .containsOnly("amount_too_large");
        assertThat(psp.refunds()).hasSize(9);
        assertThat(refunded(psp.refunds())).isEqualTo(1800);
        assertThat(psp.findById(charge.id()).orElseThrow()).returns(1800L, PspCharge::amountRefunded);
        assertThat(client.refund(PspRefundRequest.of(charge.id(), 199, "usd"), "rest")
                        .succeeded())
                .isTrue();
        assertThat(client.refund(PspRefundRequest.of(charge.id(), 1, "usd"), "one-too-many")
                        .failureCode())
                .isEqualTo("amount_too_large");
        assertThat(psp.stats().operation(PspOperation.REFUND))
                .returns(10L, OperationStats::succeeded)
                .returns(12L, OperationStats::refused);
    }

    @Test
    void refundsAreRefusedAboveTheCapturedAmountAndTheRefusalIsReplayed() {
        PspCharge charge = client.charge(VISA, "c");
        PspCharge declined = client.charge(PspChargeRequest.of(1999, "usd", "tok_chargeDeclined"), "d");
        PspCharge hold = client.authorize(VISA, "h");

        PspRefund tooMuch = client.refund(PspRefundRequest.of(charge.id(), 2000, "usd"), "too-much");
        assertThat(tooMuch)
                .returns(RefundStatus.FAILED, PspRefund::status)
                .returns("amount_too_large", PspRefund::failureCode)
                .returns(charge.id(), PspRefund::chargeId);
        HttpResponse<String> replayed = http.keyed(
                "/v1/refunds",
                "too-much",
                "{\"charge\": \"" + charge.id() + "\", \"amount\": 2000, \"currency\": \"usd\"}");
        assertThat(replayed.statusCode()).isEqualTo(402);
        assertThat(replayed.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(replayed.body()).contains("\"status\":\"failed\"", "\"failure_code\":\"amount_too_large\"");

        assertThat(client.refund(PspRefundRequest.of(declined.id(), 100, "usd"), "r-declined")
                        .failureCode())
                .isEqualTo("charge_not_captured");
        assertThat(client.refund(PspRefundRequest.of(hold.id(), 100, "usd"), "r-hold")
                        .failureCode())
                .isEqualTo("charge_not_captured");
        assertThat(client.refund(PspRefundRequest.of(charge.id(), 100, "eur"), "r-eur")
                        .failureCode())
                .isEqualTo("currency_mismatch");
        assertThat(client.refund(PspRefundRequest.of("py_missing", 100, "usd"), "r-missing")
                        .failureCode())
                .isEqualTo("resource_missing");

        client.capture(hold.id(), 1000, "cap");
        assertThat(client.refund(PspRefundRequest.of(hold.id(), 1001, "usd"), "r-partial")
                        .failureCode())
                .as("a partly captured hold refunds at most what was captured")
                .isEqualTo("amount_too_large");
        assertThat(client.refund(PspRefundRequest.of(hold.id(), 1000, "usd"), "r-all")
                        .succeeded())
                .isTrue();
        assertThat(client.refund(PspRefundRequest.of(charge.id(), 1999, "usd"), "r-full")
                        .succeeded())
                .isTrue();

        assertThat(psp.refunds()).extracting(Refund::idempotencyKey).containsExactly("r-all", "r-full");
        assertThat(client.findRefundByIdempotencyKey("too-much")).contains(tooMuch);
        assertThat(psp.stats().operation(PspOperation.REFUND))
                .returns(2L, OperationStats::succeeded)
                .returns(6L, OperationStats::refused);
    }

    @Test
    void invalidRequestsAre400AndTheKeyStaysUsable() {
        PspCharge charge = client.charge(VISA, "c");

        assertThat(http.post("/v1/refunds", refundBody(charge.id(), 5)).body()).contains("idempotency_key_missing");
        assertThat(http.keyed(
                                "/v1/refunds",
                                "k",
                                "{\"charge\": \"" + charge.id() + "\", \"amount\": 0, \"currency\": \"usd\"}")
                        .body())
                .contains("parameter_invalid", "amount");
        assertThat(http.keyed("/v1/refunds", "k", "{\"amount\": 5, \"currency\": \"usd\"}")
                        .body())
                .contains("parameter_missing", "charge");
        assertThat(http.keyed("/v1/refunds", "k", "{\"charge\": \"x\", \"amount\": 5, \"currency\": \"usd\", \"y\": 1}")
                        .body())
                .contains("parameter_unknown", "y");
        assertThat(http.keyed("/v1/refunds", "k", "").statusCode()).isEqualTo(400);
        assertThat(http.keyed("/v1/refunds", "k", refundBody(charge.id(), 5), Fault.HEADER, "explode")
                        .body())
                .contains("fault_invalid");

        HttpResponse<String> fixed = http.keyed("/v1/refunds", "k", refundBody(charge.id(), 5));
        assertThat(fixed.statusCode()).isEqualTo(200);
        assertThat(fixed.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(psp.stats().operation(PspOperation.REFUND))
                .returns(7L, OperationStats::requests)
                .returns(6L, OperationStats::rejected)
                .returns(1L, OperationStats::succeeded);
    }

    @Test
    void lookupsByKeyAndIdOverHttpAndTheClient() {
        PspCharge charge = client.charge(VISA, "c");
        PspRefund refund = client.refund(
                PspRefundRequest.of(charge.id(), 250, "usd")
                        .withReason("damaged")
                        .withMetadata(Map.of("refund", "rf_9")),
                "key with/slash & space");

        assertThat(client.findRefundByIdempotencyKey("key with/slash & space")).contains(refund);
        assertThat(client.findRefundById(refund.id())).contains(refund);
        assertThat(client.findRefundByIdempotencyKey("never-used")).isEmpty();
        assertThat(client.findRefundById("re_missing")).isEmpty();
        assertThat(psp.findRefundByIdempotencyKey("key with/slash & space")).contains(refund);
        assertThat(http.get("/v1/refunds/by-key/key%20with%2Fslash%20&%20space").body())
                .isEqualTo(http.get("/v1/refunds?idempotency_key=key+with%2Fslash+%26+space")
                        .body())
                .isEqualTo(http.get("/v1/refunds/" + refund.id()).body());
        assertThat(refund).returns("damaged", PspRefund::reason).returns(Map.of("refund", "rf_9"), PspRefund::metadata);
        assertThat(client.refunds())
                .isEqualTo(psp.refunds())
                .singleElement()
                .returns(refund.id(), Refund::refundId)
                .returns(1L, Refund::sequence);
        assertThat(client.stats()).isEqualTo(psp.stats());
    }

    // ---------------------------------------------------------------- faults

    @Test
    void dropResponseAfterTheRefundLeavesOneRefundThatTheLookupFindsAndTheRetryReplays() {
        PspCharge charge = client.charge(VISA, "c");
        PspRefundRequest request = PspRefundRequest.of(charge.id(), 700, "usd");

        assertThatThrownBy(() -> client.refund(request, "drop", List.of(Fault.dropResponse())))
                .isInstanceOfSatisfying(
                        PspConnectionException.class,
                        e -> assertThat(e.outcomeUnknown()).isTrue());
        int attempts = client.retryPolicy().maxAttempts();
        assertThat(psp.stats().fired(PspOperation.REFUND, FaultKind.DROP_RESPONSE))
                .isEqualTo(attempts);

        PspRefund found = client.findRefundByIdempotencyKey("drop").orElseThrow();
        assertThat(found.succeeded()).isTrue();
        assertThat(client.refund(request, "drop")).isEqualTo(found);
        assertThat(psp.refunds()).singleElement().returns("drop", Refund::idempotencyKey);
        assertThat(psp.stats().operation(PspOperation.REFUND).replays()).isEqualTo(attempts);
        assertThat(psp.stats().fired(PspOperation.CHARGE, FaultKind.DROP_RESPONSE))
                .isZero();
    }

    @Test
    void aDroppedRefundResponseIsRetriedWithTheSameKeyWithinOneCall() {
        PspCharge charge = client.charge(VISA, "c");
        psp.failNext(PspOperation.REFUND, 1, Fault.dropResponse());
        assertThat(psp.pendingFaults()).isEqualTo(1);

        PspRefund refund = client.refund(PspRefundRequest.of(charge.id(), 700, "usd"), "drop-once");

        assertThat(refund.succeeded()).isTrue();
        assertThat(psp.refunds()).hasSize(1);
        assertThat(psp.stats().fired(PspOperation.REFUND, FaultKind.DROP_RESPONSE))
                .isEqualTo(1);
        assertThat(psp.stats().operation(PspOperation.REFUND).replays()).isEqualTo(1);
        assertThat(psp.pendingFaults()).isZero();
    }

    @Test
    void timeoutAfterRefundLeavesOneRefundAndTimeoutBeforeLeavesNone() {
        PspCharge charge = client.charge(VISA, "c");
        PspRefundRequest request = PspRefundRequest.of(charge.id(), 700, "usd");
        try (PspClient impatient = PspClient.builder(psp.baseUri())
                .requestTimeout(Duration.ofMillis(300))
                .build()) {
            assertThatThrownBy(() -> impatient.refund(request, "before", Fault.parseHeader("timeout")))
                    .isInstanceOfSatisfying(
                            PspTimeoutException.class,
                            e -> assertThat(e.outcomeUnknown()).isTrue());
            assertThat(impatient.findRefundByIdempotencyKey("before")).isEmpty();

            assertThatThrownBy(() -> impatient.refund(request, "after", Fault.parseHeader("timeout-after-refund")))
                    .isInstanceOf(PspTimeoutException.class);
            PspRefund found = impatient.findRefundByIdempotencyKey("after").orElseThrow();
            assertThat(impatient.refund(request, "after")).isEqualTo(found);
        }
        assertThat(psp.refunds()).extracting(Refund::idempotencyKey).containsExactly("after");
        assertThat(psp.stats().fired(PspOperation.REFUND, FaultKind.TIMEOUT)).isEqualTo(1);
        assertThat(psp.stats().fired(PspOperation.REFUND, FaultKind.TIMEOUT_AFTER_CAPTURE))
                .isEqualTo(1);
    }

    @Test
    void errorLatencyAndDeclineFaultsOnRefundsFireAndAreCounted() {
        PspCharge charge = client.charge(VISA, "c");
        PspRefundRequest request = PspRefundRequest.of(charge.id(), 100, "usd");

        HttpResponse<String> error =
                http.keyed("/v1/refunds", "e", refundBody(charge.id(), 100), Fault.HEADER, "error=503");
        assertThat(error.statusCode()).isEqualTo(503);
        assertThat(error.headers().firstValue("Psp-Fault-Fired")).contains("error");
        assertThat(psp.findRefundByIdempotencyKey("e")).isEmpty();

        long start = System.nanoTime();
        PspRefund slow = client.refund(request, "e", List.of(Fault.latency(Duration.ofMillis(150))));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
        assertThat(slow.succeeded()).isTrue();

        PspRefund refused = client.refund(request, "d", List.of(Fault.decline("processing_error")));
        assertThat(refused)
                .returns(RefundStatus.FAILED, PspRefund::status)
                .returns("processing_error", PspRefund::failureCode);
        assertThat(client.refund(request, "d"))
                .as("a refusal is final for its key")
                .isEqualTo(refused);

        assertThat(psp.refunds()).extracting(Refund::idempotencyKey).containsExactly("e");
        assertThat(psp.stats().operation(PspOperation.REFUND).faults())
                .containsEntry(FaultKind.ERROR, 1L)
                .containsEntry(FaultKind.LATENCY, 1L)
                .containsEntry(FaultKind.DECLINE, 1L);
        assertThat(psp.stats().fired(FaultKind.ERROR))
                .as("totals include every operation")
                .isEqualTo(1);
    }

    @Test
    void runFaultsApplyToRefundsAndA5xxLeavesTheOutcomeUnknown() {
        PspCharge charge = client.charge(VISA, "c");
        client.close();
        client = PspClient.builder(psp.baseUri())
                .retryPolicy(RetryPolicy.noRetries())
                .build();
        psp.setFaults(FaultSettings.custom().errorRate(1.0).errorStatus(502).build());

        assertThatThrownBy(() -> client.refund(PspRefundRequest.of(charge.id(), 100, "usd"), "r"))
                .isInstanceOfSatisfying(PspServerException.class, e -> {
                    assertThat(e.status()).isEqualTo(502);
                    assertThat(e.outcomeUnknown()).isTrue();
                });
        psp.setFaults(FaultSettings.custom().dropResponseRate(1.0).build());
        assertThatThrownBy(() -> client.refund(PspRefundRequest.of(charge.id(), 100, "usd"), "r"))
                .isInstanceOf(PspConnectionException.class);
        psp.clearFaults();

        assertThat(client.refund(PspRefundRequest.of(charge.id(), 100, "usd"), "r")
                        .succeeded())
                .isTrue();
        assertThat(psp.refunds()).hasSize(1);
        assertThat(psp.stats().operation(PspOperation.REFUND).faults())
                .containsEntry(FaultKind.ERROR, 1L)
                .containsEntry(FaultKind.DROP_RESPONSE, 1L);
    }

    @Test
    void queuedFaultsOverHttpNameTheirOperation() {
        PspCharge charge = client.charge(VISA, "c");
        HttpResponse<String> next =
                http.post("/v1/faults/next", "{\"count\": 1, \"faults\": \"error=503\", \"operation\": \"refund\"}");
        assertThat(next.body()).contains("\"pending_next\":1");
        assertThat(http.post("/v1/faults/next", "{\"count\": 1, \"faults\": \"error\", \"operation\": \"nope\"}")
                        .statusCode())
                .isEqualTo(400);

        assertThat(client.charge(VISA, "c2").captured())
                .as("a charge does not consume a refund's fault")
                .isTrue();
        assertThat(http.keyed("/v1/refunds", "r", refundBody(charge.id(), 100)).statusCode())
                .isEqualTo(503);
        assertThat(http.keyed("/v1/refunds", "r", refundBody(charge.id(), 100)).statusCode())
                .isEqualTo(200);
    }

    @Test
    void brokenProcessorRefundsEveryRequestSoACheckerCanCatchIt() {
        try (PspSimulator broken = PspSimulator.start(
                        PspConfig.custom().honourIdempotencyKeys(false).build());
                PspClient brokenClient = PspClient.create(broken.baseUri())) {
            PspCharge charge = brokenClient.charge(VISA, "c");
            brokenClient.refund(PspRefundRequest.of(charge.id(), 100, "usd"), "r");
            brokenClient.refund(PspRefundRequest.of(charge.id(), 100, "usd"), "r");

            assertThat(broken.refunds()).extracting(Refund::idempotencyKey).containsExactly("r", "r");
        }
    }
}
