package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.psp.Fault;
import dev.exactly.psp.FaultSettings;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * The processor misbehaves for real (timeouts, dropped responses, errors) and the scheduled recovery
 * worker finishes or dead-letters the charges; the operator retries or resolves dead letters.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ProcessorFaultTest extends ServiceTest {

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_faults");
        registry.add("exactly.payments.lease", () -> "2s");
        registry.add("exactly.payments.processor.request-timeout", () -> "1s");
        registry.add("exactly.payments.recovery.interval", () -> "100ms");
        registry.add("exactly.payments.recovery.retry-delay", () -> "100ms");
        registry.add("exactly.payments.recovery.max-attempts", () -> "3");
    }

    @Test
    void aProcessorTimeoutLeavesTheChargeForRecoveryAndNeverCapturesTwice() {
        psp().failNext(1, Fault.timeoutAfterCapture(Duration.ofSeconds(3)));
        String body = charge(5100, "cus_timeout");
        Answer timedOut = post("/v1/charges", ACME, "timeout-1", body);
        assertThat(timedOut.status()).isEqualTo(503);
        assertThat(timedOut.problemType()).isEqualTo("processor-unavailable");
        assertThat(timedOut.json().get("code").stringValue()).isEqualTo("processor_outcome_unknown");
        assertThat(timedOut.header("Retry-After")).isNotEmpty();
        String id = timedOut.json().get("charge").stringValue();

        Answer done = retryUntilFinished("timeout-1", body);
        assertThat(done.status()).isEqualTo(201);
        assertThat(done.json().get("id").stringValue()).isEqualTo(id);
        assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
        assertThat(entriesOf(id)).isEqualTo(1);
        assertThat(psp().stats().fired(dev.exactly.psp.FaultKind.TIMEOUT_AFTER_CAPTURE))
                .as("the fault hit")
                .isPositive();
    }

    @Test
    void aDroppedResponseIsRetriedWithTheSameDownstreamKeyWithinTheCall() {
        psp().failNext(1, Fault.dropResponse());
        long replaysBefore = psp().stats().replays();
        String body = charge(5150, "cus_drop_once");

        Answer answer = post("/v1/charges", ACME, "drop-once", body);

        assertThat(answer.status()).as(answer.text()).isEqualTo(201);
        String id = answer.json().get("id").stringValue();
        assertThat(psp().stats().fired(dev.exactly.psp.FaultKind.DROP_RESPONSE))
                .as("the fault hit")
                .isPositive();
        assertThat(psp().stats().replays() - replaysBefore)
                .as("the retry was answered from the processor's record")
                .isEqualTo(1);
        assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
        assertThat(count("SELECT attempts FROM payments_charge WHERE id = ?", id))
                .as("no attempt failed")
                .isZero();
        assertThat(entriesOf(id)).isEqualTo(1);
    }

    @Test
    void captureThenDropResponseGivesOneCaptureAndTheRetryGetsTheCharge() {
        // every attempt of the service's processor call (three by default) loses its answer
        psp().failNext(3, Fault.dropResponse());
        String body = charge(5200, "cus_drop");
        Answer dropped = post("/v1/charges", ACME, "drop-1", body);
        assertThat(dropped.status()).isEqualTo(503);
        String id = dropped.json().get("charge").stringValue();
        assertThat(psp().captureCount("exactly_" + id))
                .as("the processor captured")
                .isEqualTo(1);
        assertThat(psp().stats().fired(dev.exactly.psp.FaultKind.DROP_RESPONSE))
                .as("the fault hit")
                .isPositive();

        Answer done = retryUntilFinished("drop-1", body);
        assertThat(done.status()).isEqualTo(201);
        assertThat(done.json().get("id").stringValue()).isEqualTo(id);
        assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
        assertThat(entriesOf(id)).isEqualTo(1);
        assertLedgerBalanced();
    }

    @Test
    void theWorkerDeadLettersAfterItsAttemptsAndTheOperatorRetriesOrResolves() {
        psp().setFaults(FaultSettings.custom().errorRate(1.0).build());
        String retriedBody = charge(5300, "cus_dead_retry");
        String resolvedBody = charge(5400, "cus_dead_resolve");
        String retried = post("/v1/charges", ACME, "dead-1", retriedBody)
                .json()
                .get("charge")
                .stringValue();
        String resolved = post("/v1/charges", ACME, "dead-2", resolvedBody)
                .json()
                .get("charge")
                .stringValue();

        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> chargeStatus(retried).equals("dead_lettered")
                        && chargeStatus(resolved).equals("dead_lettered"));
        assertThat(count("SELECT attempts FROM payments_charge WHERE id = ?", retried))
                .isEqualTo(3);
        JsonNode listed = get("/v1/operator/requests?state=dead_lettered", OPERATOR)
                .json()
                .get("data");
        assertThat(listed.size()).isEqualTo(2);
        for (JsonNode request : listed) {
            assertThat(request.get("dead_letter_reason").stringValue()).contains("after 3 attempts");
            assertThat(request.get("attempts").intValue()).isEqualTo(3);
        }
        Answer waiting = post("/v1/charges", ACME, "dead-1", retriedBody);
        assertThat(waiting.status()).isEqualTo(409);
        assertThat(waiting.problemType()).isEqualTo("payment-dead-lettered");
        assertThat(psp().captureCount("exactly_" + retried)).isZero();

        psp().clearFaults();
        Answer retry = post("/v1/operator/requests/" + retried + "/retry", OPERATOR, null, "");
        assertThat(retry.status()).as(retry.text()).isEqualTo(200);
        assertThat(retry.json().get("answer_status").intValue()).isEqualTo(201);
        assertThat(chargeStatus(retried)).isEqualTo("succeeded");
        Answer charged = post("/v1/charges", ACME, "dead-1", retriedBody);
        assertThat(charged.status()).isEqualTo(201);
        assertThat(charged.json().get("id").stringValue()).isEqualTo(retried);
        assertThat(psp().captureCount("exactly_" + retried)).isEqualTo(1);
        assertThat(entriesOf(retried)).isEqualTo(1);

        Answer resolve = post(
                "/v1/operator/requests/" + resolved + "/resolve",
                OPERATOR,
                null,
                "{\"outcome\":\"failed\",\"reason\":\"card issuer unreachable, customer informed\"}");
        assertThat(resolve.status()).as(resolve.text()).isEqualTo(200);
        assertThat(chargeStatus(resolved)).isEqualTo("failed");
        Answer failed = post("/v1/charges", ACME, "dead-2", resolvedBody);
        assertThat(failed.status()).isEqualTo(402);
        assertThat(failed.json().get("charge").stringValue()).isEqualTo(resolved);
        assertThat(entriesOf(resolved)).isZero();
        assertThat(get("/v1/operator/requests?state=dead_lettered", OPERATOR)
                        .json()
                        .get("data")
                        .size())
                .isZero();
        assertThat(post("/v1/operator/requests/" + resolved + "/retry", OPERATOR, null, "")
                        .status())
                .isEqualTo(409);
        assertLedgerBalanced();
    }

    private Answer retryUntilFinished(String key, String body) {
        AtomicReference<Answer> last = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    Answer a = post("/v1/charges", ACME, key, body);
                    last.set(a);
                    assertThat(a.status()).as(a.text()).isIn(201, 409, 503);
                    return a.status() == 201;
                });
        return last.get();
    }
}
