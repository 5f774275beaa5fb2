package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.psp.Fault;
import dev.exactly.psp.FaultKind;
import dev.exactly.psp.FaultSettings;
import dev.exactly.psp.PspOperation;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Refunds when the processor misbehaves for real (dropped responses, timeouts, errors): the refund stays
 * pending with its amount reserved, the answer is 503 with Retry-After (never "not executed"), and the
 * client's retry or the scheduled recovery worker finishes it under the same downstream key: one refund at
 * the processor, one journal entry, the same answer. Crashes between phases: {@link RefundCrashTest}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RefundFaultTest extends ServiceTest {

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_refund_faults");
        registry.add("exactly.payments.lease", () -> "2s");
        registry.add("exactly.payments.processor.request-timeout", () -> "1s");
        registry.add("exactly.payments.recovery.interval", () -> "100ms");
        registry.add("exactly.payments.recovery.retry-delay", () -> "100ms");
        registry.add("exactly.payments.recovery.max-attempts", () -> "3");
    }

    /**
     * A charge to refund. With this short lease a loaded machine can make the charge's owner lose its lease
     * (409, or 503 while recovery finishes it): then the client retries with the same key, as the answer says.
     */
    private String charged(String key, long amount, String customer) {
        AtomicReference<Answer> last = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    Answer a = post("/v1/charges", ACME, key, charge(amount, customer));
                    last.set(a);
                    assertThat(a.status()).as(a.text()).isIn(201, 409, 503);
                    return a.status() == 201;
                });
        return last.get().json().get("id").stringValue();
    }

    /** Refunds the processor made of a charge, whatever their key. */
    private long processorRefundsOfCharge(String chargeId) {
        String processorCharge = (String) rows("SELECT processor_charge_id FROM payments_charge WHERE id = ?", chargeId)
                .getFirst()
                .get("processor_charge_id");
        return psp().refunds().stream()
                .filter(r -> r.chargeId().equals(processorCharge))
                .count();
    }

    private String refundStatus(String refundId) {
        return (String) rows("SELECT status FROM payments_refund WHERE id = ?", refundId)
                .getFirst()
                .get("status");
    }

    @Test
    void aDroppedResponseAfterTheProcessorRefundedGivesOneRefundAndTheRetryGetsIt() {
        String chargeId = charged("rf-drop-charge", 2000, "cus_rf_drop");
        // every attempt of the service's processor call (three by default) loses its answer
        psp().failNext(PspOperation.REFUND, 3, Fault.dropResponse());
        String body = refund(chargeId, 500);
        Answer dropped = post("/v1/refunds", ACME, "rf-drop", body);
        assertThat(dropped.status()).as(dropped.text()).isEqualTo(503);
        assertThat(dropped.problemType()).isEqualTo("processor-unavailable");
        assertThat(dropped.json().get("code").stringValue()).isEqualTo("processor_outcome_unknown");
        assertThat(dropped.header("Retry-After")).isNotEmpty();
        String refundId = dropped.json().get("refund").stringValue();
        assertThat(processorRefunds(refundId)).as("the processor refunded").isEqualTo(1);
        assertThat(psp().stats().fired(PspOperation.REFUND, FaultKind.DROP_RESPONSE))
                .as("the fault hit")
                .isPositive();
        // pending or already recovered, the refund's amount counts against the charge
        Answer tooMuch = post("/v1/refunds", ACME, "rf-drop-too-much", refund(chargeId, 1501));
        assertThat(tooMuch.status()).as(tooMuch.text()).isEqualTo(422);
        assertThat(tooMuch.json().get("refundable").longValue()).isEqualTo(1500);

        Answer done = retryUntilFinished("rf-drop", body);
        assertThat(done.json().get("id").stringValue()).isEqualTo(refundId);
        assertThat(processorRefunds(refundId)).as("one refund at the processor").isEqualTo(1);
        assertThat(processorRefundsOfCharge(chargeId)).as("under any key").isEqualTo(1);
        assertThat(refundEntriesOf(refundId)).as("one journal entry").isEqualTo(1);
        assertThat(post("/v1/refunds", ACME, "rf-drop", body).body()).isEqualTo(done.body());
        assertThat(get("/v1/charges/" + chargeId, ACME)
                        .json()
                        .get("amount_refunded")
                        .longValue())
                .isEqualTo(500);
        assertLedgerBalanced();
    }

    @Test
    void aTimeoutAfterTheRefundIsRecoveredByTheWorker() {
        String chargeId = charged("rf-timeout-charge", 1200, "cus_rf_timeout");
        psp().failNext(PspOperation.REFUND, 1, Fault.timeoutAfterCapture(Duration.ofSeconds(3)));
        String body = refund(chargeId, 1200);
        Answer timedOut = post("/v1/refunds", ACME, "rf-timeout", body);
        assertThat(timedOut.status()).as(timedOut.text()).isEqualTo(503);
        assertThat(timedOut.json().get("code").stringValue()).isEqualTo("processor_outcome_unknown");
        String refundId = timedOut.json().get("refund").stringValue();
        assertThat(psp().stats().fired(PspOperation.REFUND, FaultKind.TIMEOUT_AFTER_CAPTURE))
                .as("the fault hit")
                .isPositive();

        // nobody retries: the scheduled worker asks the processor by key and finishes the refund
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> refundStatus(refundId).equals("succeeded"));
        Answer replayed = post("/v1/refunds", ACME, "rf-timeout", body);
        assertThat(replayed.status()).isEqualTo(201);
        assertThat(replayed.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(replayed.json().get("id").stringValue()).isEqualTo(refundId);
        assertThat(processorRefunds(refundId)).isEqualTo(1);
        assertThat(processorRefundsOfCharge(chargeId)).isEqualTo(1);
        assertThat(refundEntriesOf(refundId)).isEqualTo(1);
        assertThat(count("""
                SELECT r.takeovers FROM idempotency_records r JOIN payments_refund f ON f.scope_key = r.scope_key
                WHERE f.id = ?""", refundId)).as("the worker took the record over").isPositive();
        assertLedgerBalanced();
    }

    @Test
    void aRefundWithoutAnswersIsDeadLetteredAndKeepsItsReservation() {
        String chargeId = charged("rf-dead-charge", 1000, "cus_rf_dead");
        psp().setFaults(FaultSettings.custom().errorRate(1.0).build());
        String body = refund(chargeId, 700);
        Answer unavailable = post("/v1/refunds", ACME, "rf-dead", body);
        assertThat(unavailable.status()).as(unavailable.text()).isEqualTo(503);
        String refundId = unavailable.json().get("refund").stringValue();

        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> refundStatus(refundId).equals("dead_lettered"));
        assertThat(count("SELECT attempts FROM payments_refund WHERE id = ?", refundId))
                .isEqualTo(3);
        Answer waiting = post("/v1/refunds", ACME, "rf-dead", body);
        assertThat(waiting.status()).as(waiting.text()).isEqualTo(409);
        assertThat(waiting.problemType()).isEqualTo("payment-dead-lettered");
        assertThat(waiting.json().get("refund").stringValue()).isEqualTo(refundId);
        // whether the processor refunded is unknown to the service: the amount stays reserved
        Answer rest = post("/v1/refunds", ACME, "rf-dead-rest", refund(chargeId, 301));
        assertThat(rest.status()).as(rest.text()).isEqualTo(422);
        assertThat(rest.json().get("refundable").longValue()).isEqualTo(300);
        psp().clearFaults();
        assertThat(processorRefundsOfCharge(chargeId)).isZero();
        assertThat(refundEntriesOf(refundId)).isZero();
        assertLedgerBalanced();
    }

    private Answer retryUntilFinished(String key, String body) {
        AtomicReference<Answer> last = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    Answer a = post("/v1/refunds", ACME, key, body);
                    last.set(a);
                    assertThat(a.status()).as(a.text()).isIn(201, 409, 503);
                    return a.status() == 201;
                });
        return last.get();
    }
}
