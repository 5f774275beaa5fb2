package dev.exactly.psp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The capture and refund logs listed by time window, and the test-only planted mismatches. */
class ReconciliationListingTest {

    private static final PspChargeRequest VISA = PspChargeRequest.of(1999, "usd", "tok_visa");
    private static final Instant T0 = Instant.parse("2026-12-01T12:00:00Z");

    private final MutableClock clock = new MutableClock(T0);
    private PspSimulator psp;
    private Http http;
    private PspClient client;

    @BeforeEach
    void start() {
        psp = PspSimulator.start(PspConfig.custom().clock(clock).build());
        http = new Http(psp.baseUri());
        client = PspClient.create(psp.baseUri());
    }

    @AfterEach
    void stop() {
        client.close();
        http.close();
        psp.close();
    }

    @Test
    void capturesAndRefundsAreListedByTheirHalfOpenTimeWindow() {
        PspCharge a = client.charge(VISA, "a"); // captured at T0
        PspCharge hold = client.authorize(VISA, "hold"); // nothing moves
        clock.advance(Duration.ofMinutes(10));
        client.capture(hold.id(), 1500, "hold/capture"); // captured at T0+10m
        PspRefund r1 = client.refund(PspRefundRequest.of(a.id(), 100, "usd"), "a/refund/1"); // T0+10m
        clock.advance(Duration.ofMinutes(10));
        PspCharge b = client.charge(VISA.withMetadata(Map.of("payment", "pay_b")), "b"); // T0+20m
        client.refund(PspRefundRequest.of(b.id(), 1999, "usd"), "b/refund"); // T0+20m
        client.refund(PspRefundRequest.of(b.id(), 1, "usd"), "b/refund/too-much"); // failed: not listed

        Instant tenMinutes = T0.plus(Duration.ofMinutes(10));
        Instant twentyMinutes = T0.plus(Duration.ofMinutes(20));
        assertThat(client.captures(T0, tenMinutes))
                .singleElement()
                .returns("a", Capture::idempotencyKey)
                .returns(a.id(), Capture::chargeId)
                .returns(T0, Capture::capturedAt);
        assertThat(client.captures(tenMinutes, twentyMinutes))
                .singleElement()
                .returns("hold/capture", Capture::idempotencyKey)
                .returns(hold.id(), Capture::chargeId)
                .returns(1500L, Capture::amount)
                .returns("usd", Capture::currency);
        assertThat(client.captures(T0, twentyMinutes.plusNanos(1)))
                .extracting(Capture::idempotencyKey)
                .containsExactly("a", "hold/capture", "b");
        assertThat(client.captures(T0.minusSeconds(60), T0)).isEmpty();
        assertThat(client.captures(T0, T0.plus(Duration.ofDays(1)))).isEqualTo(psp.captures());

        assertThat(client.refunds(tenMinutes, twentyMinutes))
                .singleElement()
                .returns(r1.id(), Refund::refundId)
                .returns("a/refund/1", Refund::idempotencyKey)
                .returns(a.id(), Refund::chargeId)
                .returns(100L, Refund::amount)
                .returns(tenMinutes, Refund::refundedAt);
        assertThat(client.refunds(twentyMinutes, twentyMinutes.plusSeconds(1)))
                .extracting(Refund::idempotencyKey)
                .containsExactly("b/refund");
        assertThat(psp.refunds(T0, twentyMinutes)).isEqualTo(client.refunds(T0, twentyMinutes));

        HttpResponse<String> raw = http.get("/v1/refunds?from=2026-12-01T12:05:00Z&to=2026-12-01T12:15:00Z");
        assertThat(raw.statusCode()).isEqualTo(200);
        assertThat(raw.body())
                .contains(
                        "\"id\":\"" + r1.id() + "\"",
                        "\"idempotency_key\":\"a/refund/1\"",
                        "\"charge_id\":\"" + a.id() + "\"",
                        "\"amount\":100",
                        "\"currency\":\"usd\"",
                        "\"refunded_at\":\"2026-12-01T12:10:00Z\"");
        assertThat(http.get("/v1/captures?from=2026-12-01T12:20:00Z").body())
                .contains("\"idempotency_key\":\"b\"", "\"metadata\":{\"payment\":\"pay_b\"}")
                .doesNotContain("\"idempotency_key\":\"a\"");
        assertThat(http.get("/v1/captures?from=yesterday").statusCode()).isEqualTo(400);
        assertThat(http.get("/v1/refunds?to=1700000000").body()).contains("parameter_invalid", "ISO-8601");
    }

    @Test
    void aPlantedCaptureIsInTheLogAndTheLookupsWithoutAnyRequest() {
        PspCharge planted = psp.plantCapture("planted-1", 4200, "eur", Map.of("payment", "pay_x"));

        assertThat(planted)
                .returns(ChargeStatus.CAPTURED, PspCharge::status)
                .returns(4200L, PspCharge::amountCaptured)
                .returns("tok_planted", PspCharge::source);
        assertThat(client.captures(T0, T0.plusSeconds(1)))
                .singleElement()
                .returns("planted-1", Capture::idempotencyKey)
                .returns(planted.id(), Capture::chargeId)
                .returns(4200L, Capture::amount)
                .returns("eur", Capture::currency);
        assertThat(client.findByIdempotencyKey("planted-1")).contains(planted);
        assertThat(psp.stats()).returns(0L, PspStats::requests).returns(0L, PspStats::captures);
        assertThatThrownBy(() -> psp.plantCapture("planted-1", 1, "eur", Map.of()))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> client.charge(PspChargeRequest.of(4200, "eur", "tok_visa"), "planted-1"))
                .isInstanceOfSatisfying(
                        PspRequestException.class, e -> assertThat(e.code()).isEqualTo("idempotency_key_reused"));

        HttpResponse<String> overHttp = http.post(
                "/v1/test/plant-capture",
                "{\"idempotency_key\": \"planted-2\", \"amount\": 700, \"currency\": \"usd\"}");
        assertThat(overHttp.statusCode()).isEqualTo(200);
        assertThat(overHttp.body()).contains("\"status\":\"captured\"", "\"idempotency_key\":\"planted-2\"");
        assertThat(http.post(
                                "/v1/test/plant-capture",
                                "{\"idempotency_key\": \"planted-2\", \"amount\": 700, \"currency\": \"usd\"}")
                        .statusCode())
                .isEqualTo(422);
        assertThat(http.post("/v1/test/plant-capture", "{\"amount\": 700, \"currency\": \"usd\"}")
                        .body())
                .contains("parameter_missing");
        assertThat(psp.captures()).extracting(Capture::idempotencyKey).containsExactly("planted-1", "planted-2");
        assertThat(psp.refunds(T0, T0.plusSeconds(1))).isEmpty();
    }

    @Test
    void aPlantedRefundIsInTheRefundLogWithTheUsualLimits() {
        PspCharge charge = client.charge(VISA, "c");

        PspRefund planted = psp.plantRefund(PspRefundRequest.of(charge.id(), 500, "usd"), "planted-refund");
        HttpResponse<String> overHttp = http.post(
                "/v1/test/plant-refund",
                "{\"idempotency_key\": \"planted-2\"," + " \"charge\": \"" + charge.id()
                        + "\", \"amount\": 2000, \"currency\": \"usd\"}");

        assertThat(planted.succeeded()).isTrue();
        assertThat(overHttp.statusCode()).isEqualTo(402);
        assertThat(overHttp.body()).contains("\"failure_code\":\"amount_too_large\"");
        assertThat(client.refunds(T0, T0.plusSeconds(1)))
                .singleElement()
                .returns(planted.id(), Refund::refundId)
                .returns("planted-refund", Refund::idempotencyKey);
        assertThat(client.findById(charge.id()).orElseThrow().amountRefunded()).isEqualTo(500);
        assertThat(psp.stats().operation(PspOperation.REFUND).requests()).isZero();
        assertThatThrownBy(() -> psp.plantRefund(PspRefundRequest.of(charge.id(), 1, "usd"), "planted-refund"))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aCaptureAmendedOrRemovedInTheLogOnlyChangesTheListing() {
        PspCharge a = client.charge(VISA, "a");
        PspCharge b = client.charge(VISA, "b");
        PspCharge c = client.charge(VISA, "c");

        assertThat(psp.amendCapture(a.id(), 1500))
                .hasValueSatisfying(e -> assertThat(e.amount()).isEqualTo(1500));
        HttpResponse<String> removed = http.post("/v1/test/remove-capture", "{\"charge\": \"" + b.id() + "\"}");
        HttpResponse<String> amended =
                http.post("/v1/test/amend-capture", "{\"charge\": \"" + c.id() + "\", \"amount\": 7}");

        assertThat(removed.statusCode()).isEqualTo(200);
        assertThat(removed.body()).contains("\"idempotency_key\":\"b\"", "\"amount\":1999");
        assertThat(amended.statusCode()).isEqualTo(200);
        assertThat(amended.body()).contains("\"charge_id\":\"" + c.id() + "\"", "\"amount\":7");
        assertThat(client.captures(T0, T0.plusSeconds(1)))
                .extracting(Capture::idempotencyKey, Capture::amount, Capture::sequence)
                .containsExactly(Tuple.tuple("a", 1500L, 1L), Tuple.tuple("c", 7L, 3L));
        assertThat(client.findById(a.id()).orElseThrow().amountCaptured())
                .as("the charge keeps what happened")
                .isEqualTo(1999);
        assertThat(client.findById(b.id()).orElseThrow().captured()).isTrue();

        client.charge(VISA, "d");
        assertThat(psp.captures())
                .extracting(Capture::sequence)
                .as("sequences stay unique")
                .containsExactly(1L, 3L, 4L);
        assertThat(psp.removeCapture(b.id())).isEmpty();
        assertThat(http.post("/v1/test/remove-capture", "{\"charge\": \"py_missing\"}")
                        .statusCode())
                .isEqualTo(404);
        assertThat(http.post("/v1/test/amend-capture", "{\"charge\": \"" + a.id() + "\"}")
                        .body())
                .contains("parameter_missing", "amount");
        assertThat(http.post("/v1/test/remove-capture", "{\"charge\": \"" + a.id() + "\", \"amount\": 1}")
                        .body())
                .contains("parameter_unknown");
    }
}
