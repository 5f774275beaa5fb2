package dev.exactly.psp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Authorize ({@code "capture": false}), then capture or void, over real HTTP. */
class AuthorizationTest {

    private static final PspChargeRequest VISA = PspChargeRequest.of(1999, "usd", "tok_visa");
    private static final Instant T0 = Instant.parse("2026-12-01T12:00:00Z");

    private final MutableClock clock = new MutableClock(T0);
    private PspSimulator psp;
    private Http http;
    private PspClient client;

    @BeforeEach
    void start() {
        psp = PspSimulator.start(PspConfig.custom()
                .clock(clock)
                .authorizationTtl(Duration.ofHours(1))
                .build());
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

    private static void assertRefused(Runnable call, String code) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(PspRequestException.class, e -> {
            assertThat(e.status()).isEqualTo(402);
            assertThat(e.code()).isEqualTo(code);
            assertThat(e.refused()).isTrue();
            assertThat(e.outcomeUnknown()).isFalse();
        });
    }

    @Test
    void anAuthorizationHoldsWithoutCapturingAndExpiresAfterItsTtl() {
        HttpResponse<String> raw = http.charge(
                "h", "{\"amount\": 1999, \"currency\": \"usd\", \"source\": \"tok_visa\"," + " \"capture\": false}");
        assertThat(raw.statusCode()).isEqualTo(200);
        assertThat(raw.body())
                .contains(
                        "\"status\":\"authorized\"",
                        "\"amount_captured\":0",
                        "\"expires_at\":" + T0.plus(Duration.ofHours(1)).getEpochSecond());

        PspCharge hold = client.findByIdempotencyKey("h").orElseThrow();
        assertThat(hold)
                .returns(ChargeStatus.AUTHORIZED, PspCharge::status)
                .returns(true, PspCharge::authorized)
                .returns(false, PspCharge::captured)
                .returns(0L, PspCharge::amountCaptured)
                .returns(T0.plus(Duration.ofHours(1)), PspCharge::expiresAt);
        assertThat(psp.captures()).isEmpty();
        assertThat(psp.stats()).returns(0L, PspStats::captures);
        assertThat(psp.stats().operation(PspOperation.CHARGE).succeeded()).isEqualTo(1);

        clock.advance(Duration.ofMinutes(59));
        assertThat(client.findById(hold.id()).orElseThrow().status()).isEqualTo(ChargeStatus.AUTHORIZED);
        clock.advance(Duration.ofMinutes(1));
        assertThat(client.findById(hold.id()).orElseThrow().status()).isEqualTo(ChargeStatus.EXPIRED);
        assertRefused(() -> client.capture(hold.id(), "cap"), "authorization_expired");
        assertThat(client.voidAuthorization(hold.id(), "void").status())
                .as("an expired hold has nothing left to release")
                .isEqualTo(ChargeStatus.EXPIRED);
        assertThat(psp.captures()).isEmpty();
    }

    @Test
    void captureOncePerKeyAndNeverTwicePerCharge() {
        PspCharge hold = client.authorize(VISA.withMetadata(Map.of("payment", "pay_1")), "h");

        HttpResponse<String> first = http.keyed("/v1/charges/" + hold.id() + "/capture", "cap", "");
        HttpResponse<String> replay = http.keyed("/v1/charges/" + hold.id() + "/capture", "cap", "{}");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).contains("\"status\":\"captured\"", "\"amount_captured\":1999");
        assertThat(replay.statusCode()).isEqualTo(200);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(replay.body()).isEqualTo(first.body());
        assertRefused(() -> client.capture(hold.id(), "another-key"), "charge_already_captured");
        assertRefused(() -> client.capture(hold.id(), 5, "a-third-key"), "charge_already_captured");
        assertThat(http.keyed("/v1/charges/" + hold.id() + "/capture", "cap", "{\"amount\": 5}")
                        .statusCode())
                .as("same key, another amount")
                .isEqualTo(422);

        assertThat(psp.captures())
                .singleElement()
                .returns("cap", Capture::idempotencyKey)
                .returns(hold.id(), Capture::chargeId)
                .returns(1999L, Capture::amount)
                .returns(T0, Capture::capturedAt)
                .returns(Map.of("payment", "pay_1"), Capture::metadata);
        assertThat(client.findByIdempotencyKey("h").orElseThrow())
                .returns(ChargeStatus.CAPTURED, PspCharge::status)
                .returns(1999L, PspCharge::amountCaptured);
        assertThat(psp.stats()).returns(1L, PspStats::captures);
        assertThat(psp.stats().operation(PspOperation.CAPTURE))
                .returns(5L, OperationStats::requests)
                .returns(1L, OperationStats::succeeded)
                .returns(2L, OperationStats::refused)
                .returns(1L, OperationStats::replays)
                .returns(1L, OperationStats::rejected);
    }

    @Test
    void aPartialCaptureIsAtMostTheAuthorizedAmount() {
        PspCharge hold = client.authorize(VISA, "h");

        assertRefused(() -> client.capture(hold.id(), 2000, "too-much"), "amount_too_large");
        assertThat(client.findById(hold.id()).orElseThrow().status())
                .as("still a hold")
                .isEqualTo(ChargeStatus.AUTHORIZED);
        assertRefused(() -> client.capture(hold.id(), 2000, "too-much"), "amount_too_large");

        PspCharge captured = client.capture(hold.id(), 1500, "part");
        assertThat(captured)
                .returns(ChargeStatus.CAPTURED, PspCharge::status)
                .returns(1999L, PspCharge::amount)
                .returns(1500L, PspCharge::amountCaptured);
        assertThat(psp.captures()).singleElement().returns(1500L, Capture::amount);
        assertThat(http.keyed("/v1/charges/" + hold.id() + "/capture", "k", "{\"amount\": 0}")
                        .body())
                .contains("parameter_invalid");
        assertThat(http.keyed("/v1/charges/" + hold.id() + "/capture", "k", "{\"amount\": 1, \"x\": 1}")
                        .body())
                .contains("parameter_unknown");
    }

    @Test
    void voidReleasesTheHoldOnceAndExcludesCapture() {
        PspCharge hold = client.authorize(VISA, "h");

        PspCharge voided = client.voidAuthorization(hold.id(), "void");
        HttpResponse<String> replay = http.keyed("/v1/charges/" + hold.id() + "/void", "void", "");

        assertThat(voided.status()).isEqualTo(ChargeStatus.VOIDED);
        assertThat(replay.statusCode()).isEqualTo(200);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(client.voidAuthorization(hold.id(), "void-again").status()).isEqualTo(ChargeStatus.VOIDED);
        assertRefused(() -> client.capture(hold.id(), "cap"), "charge_voided");
        assertThat(client.findByIdempotencyKey("h").orElseThrow().status()).isEqualTo(ChargeStatus.VOIDED);
        assertThat(http.keyed("/v1/charges/" + hold.id() + "/void", "v", "{\"amount\": 1}")
                        .body())
                .contains("parameter_unknown");

        PspCharge other = client.authorize(VISA, "h2");
        client.capture(other.id(), "cap2");
        assertRefused(() -> client.voidAuthorization(other.id(), "void2"), "charge_already_captured");

        PspCharge immediate = client.charge(VISA, "c");
        assertRefused(() -> client.capture(immediate.id(), "cap3"), "charge_already_captured");
        assertRefused(() -> client.voidAuthorization(immediate.id(), "void3"), "charge_already_captured");
        PspCharge declined = client.authorize(PspChargeRequest.of(1999, "usd", "tok_chargeDeclined"), "d");
        assertThat(declined.status()).isEqualTo(ChargeStatus.DECLINED);
        assertRefused(() -> client.capture(declined.id(), "cap4"), "charge_declined");
        assertRefused(() -> client.capture("py_missing", "cap5"), "resource_missing");
        assertRefused(() -> client.voidAuthorization("py_missing", "void5"), "resource_missing");

        assertThat(psp.captures()).extracting(Capture::idempotencyKey).containsExactly("cap2", "c");
        assertThat(psp.stats().operation(PspOperation.VOID))
                .returns(2L, OperationStats::succeeded)
                .returns(3L, OperationStats::refused);
    }

    @Test
    void concurrentCapturesAndVoidsOfOneHoldLetExactlyOneKindWin() throws Exception {
        int holds = 8;
        int perHold = 8;
        List<PspCharge> authorized = new ArrayList<>();
        for (int i = 0; i < holds; i++) {
            authorized.add(client.authorize(VISA, "h" + i));
        }
        List<Callable<String>> calls = new ArrayList<>();
        for (PspCharge hold : authorized) {
            for (int j = 0; j < perHold; j++) {
                boolean capture = j % 2 == 0;
                String key = hold.id() + (capture ? "/capture/" : "/void/") + j;
                calls.add(() -> {
                    try {
                        PspCharge after = capture
                                ? client.capture(hold.id(), 1000, key)
                                : client.voidAuthorization(hold.id(), key);
                        return hold.id() + " "
                                + (capture ? "captured" : after.status().wireName());
                    } catch (PspRequestException e) {
                        assertThat(e.refused()).isTrue();
                        return hold.id() + " refused " + e.code();
                    }
                });
            }
        }

        Map<String, List<String>> byHold = new TreeMap<>();
        for (String outcome : Race.run(calls)) {
            String[] parts = outcome.split(" ", 2);
            byHold.computeIfAbsent(parts[0], k -> new ArrayList<>()).add(parts[1]);
        }

        for (PspCharge hold : authorized) {
            List<String> results = byHold.get(hold.id());
            PspCharge now = psp.findById(hold.id()).orElseThrow();
            if (now.captured()) {
                assertThat(results)
                        .containsOnlyOnce("captured")
                        .containsOnly("captured", "refused charge_already_captured");
                assertThat(now.amountCaptured()).isEqualTo(1000);
            } else {
                assertThat(now.status()).isEqualTo(ChargeStatus.VOIDED);
                assertThat(results).doesNotContain("captured").containsOnly("voided", "refused charge_voided");
            }
        }
        long captured = authorized.stream()
                .filter(h -> psp.findById(h.id()).orElseThrow().captured())
                .count();
        assertThat(psp.captures()).hasSize((int) captured);
        assertThat(psp.captureCounts().values()).allMatch(n -> n == 1);
        assertThat(psp.captures().stream().map(Capture::chargeId).distinct().count())
                .isEqualTo(captured);
    }

    @Test
    void thirtyTwoConcurrentCapturesWithOneKeyCaptureOnce() throws Exception {
        PspCharge hold = client.authorize(VISA, "h");

        List<HttpResponse<String>> answers = Race.run(
                32,
                () -> http.keyed(
                        "/v1/charges/" + hold.id() + "/capture",
                        "race",
                        "{\"amount\": 1200}",
                        Fault.HEADER,
                        "latency=100ms"));

        assertThat(answers).extracting(HttpResponse::statusCode).containsOnly(200);
        assertThat(answers)
                .extracting(HttpResponse::body)
                .containsOnly(answers.get(0).body());
        assertThat(psp.captures()).singleElement().returns(1200L, Capture::amount);
        assertThat(psp.stats().operation(PspOperation.CAPTURE))
                .returns(1L, OperationStats::succeeded)
                .returns(31L, OperationStats::replays);
    }

    // ---------------------------------------------------------------- faults

    @Test
    void aCaptureWhoseResponseIsDroppedCapturesOnceAndTheRetryReplaysIt() {
        PspCharge hold = client.authorize(VISA, "h");

        assertThatThrownBy(() -> client.capture(hold.id(), OptionalLong.empty(), "cap", List.of(Fault.dropResponse())))
                .isInstanceOfSatisfying(
                        PspConnectionException.class,
                        e -> assertThat(e.outcomeUnknown()).isTrue());
        assertThat(client.findById(hold.id()).orElseThrow().status())
                .as("the lookup tells")
                .isEqualTo(ChargeStatus.CAPTURED);
        assertThat(client.capture(hold.id(), "cap").amountCaptured()).isEqualTo(1999);

        psp.failNext(PspOperation.CAPTURE, 1, Fault.dropResponse());
        PspCharge second = client.authorize(VISA, "h2");
        assertThat(client.capture(second.id(), "cap2").captured())
                .as("retried within the call")
                .isTrue();

        assertThat(psp.captures()).extracting(Capture::idempotencyKey).containsExactly("cap", "cap2");
        assertThat(psp.stats().fired(PspOperation.CAPTURE, FaultKind.DROP_RESPONSE))
                .isEqualTo(client.retryPolicy().maxAttempts() + 1);
    }

    @Test
    void faultsBeforeTheCaptureLeaveTheHoldAndFaultsAfterTheVoidLeaveItVoided() {
        PspCharge hold = client.authorize(VISA, "h");
        try (PspClient impatient = PspClient.builder(psp.baseUri())
                .requestTimeout(Duration.ofMillis(300))
                .build()) {
            assertThatThrownBy(
                            () -> impatient.capture(hold.id(), OptionalLong.empty(), "cap", List.of(Fault.timeout())))
                    .isInstanceOf(PspTimeoutException.class);
            HttpResponse<String> error =
                    http.keyed("/v1/charges/" + hold.id() + "/capture", "cap", "", Fault.HEADER, "error");
            assertThat(error.statusCode()).isEqualTo(500);
            assertThat(impatient.findById(hold.id()).orElseThrow().status()).isEqualTo(ChargeStatus.AUTHORIZED);

            assertThatThrownBy(
                            () -> impatient.voidAuthorization(hold.id(), "void", List.of(Fault.timeoutAfterCapture())))
                    .isInstanceOf(PspTimeoutException.class);
            assertThat(impatient.findById(hold.id()).orElseThrow().status()).isEqualTo(ChargeStatus.VOIDED);
            assertThat(impatient.voidAuthorization(hold.id(), "void").status()).isEqualTo(ChargeStatus.VOIDED);
        }
        PspCharge other = client.authorize(VISA, "h2");
        assertRefused(
                () -> client.voidAuthorization(other.id(), "v2", List.of(Fault.decline("processing_error"))),
                "processing_error");
        assertRefused(
                () -> client.capture(
                        other.id(),
                        OptionalLong.of(10),
                        "c2",
                        List.of(Fault.latency(Duration.ofMillis(10)), Fault.decline())),
                "card_declined");
        assertThat(client.findById(other.id()).orElseThrow().status()).isEqualTo(ChargeStatus.AUTHORIZED);

        PspStats stats = psp.stats();
        assertThat(stats.operation(PspOperation.CAPTURE).faults())
                .containsEntry(FaultKind.TIMEOUT, 1L)
                .containsEntry(FaultKind.ERROR, 1L)
                .containsEntry(FaultKind.LATENCY, 1L)
                .containsEntry(FaultKind.DECLINE, 1L);
        assertThat(stats.operation(PspOperation.VOID).faults())
                .containsEntry(FaultKind.TIMEOUT_AFTER_CAPTURE, 1L)
                .containsEntry(FaultKind.DECLINE, 1L);
        assertThat(psp.captures()).isEmpty();
    }
}
