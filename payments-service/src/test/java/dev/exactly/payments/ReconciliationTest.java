package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.reconciliation.Mismatch;
import dev.exactly.payments.reconciliation.ReconciliationSchedule;
import dev.exactly.psp.PspRefundRequest;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * Reconciliation finds every kind of mismatch planted at the processor (its test-only endpoints change its
 * books behind the service's back), names the charges, and finds nothing on clean books; the scheduled run
 * publishes the open mismatches as a meter. Bad windows are problem documents, and only the operator may
 * ask.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ReconciliationTest extends ServiceTest {

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_recon");
        registry.add("exactly.payments.reconciliation.enabled", () -> "false");
    }

    @Autowired
    ReconciliationSchedule schedule;

    private String charged(String customer, long amount) {
        Answer created = post("/v1/charges", ACME, "recon-" + customer, charge(amount, customer));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        return created.json().get("id").stringValue();
    }

    private String processorId(String chargeId) {
        return (String) rows("SELECT processor_charge_id FROM payments_charge WHERE id = ?", chargeId)
                .getFirst()
                .get("processor_charge_id");
    }

    private JsonNode reconcile(Instant from, Instant to) {
        Answer answer = get("/v1/operator/reconciliation?from=" + from + "&to=" + to, OPERATOR);
        assertThat(answer.status()).as(answer.text()).isEqualTo(200);
        return answer.json();
    }

    @Test
    void everyPlantedMismatchIsFoundAndCleanBooksHaveNone() {
        Instant from = Instant.now().minus(1, ChronoUnit.MINUTES);
        String clean = charged("cus_recon_clean", 1000);
        String amended = charged("cus_recon_amended", 2000);
        String removed = charged("cus_recon_removed", 3000);
        String refunded = charged("cus_recon_refunded", 4000);
        Instant cleanTo = Instant.now().plus(1, ChronoUnit.MINUTES);
        JsonNode before = reconcile(from, cleanTo);
        assertThat(before.get("mismatches").size()).as(before.toString()).isZero();
        assertThat(before.get("captures_compared").intValue()).isGreaterThanOrEqualTo(4);

        // behind the service's back: a capture nobody asked for, a capture log with another amount, a
        // capture the log lost, a refund the service never made
        String planted =
                psp().plantCapture("recon-planted-key", 777, "usd", Map.of()).id();
        assertThat(psp().amendCapture(processorId(amended), 2500)).isPresent();
        assertThat(psp().removeCapture(processorId(removed))).isPresent();
        psp().plantRefund(
                        new PspRefundRequest(processorId(refunded), 400, "usd", null, Map.of()),
                        "recon-planted-refund");
        // and a refund through the service whose processor total then differs from the ledger's
        Answer refund = post("/v1/refunds", ACME, "recon-refund-1", "{\"charge\":\"" + clean + "\",\"amount\":300}");
        assertThat(refund.status()).as(refund.text()).isEqualTo(201);
        psp().plantRefund(
                        new PspRefundRequest(processorId(clean), 50, "usd", null, Map.of()), "recon-planted-refund-2");

        JsonNode after = reconcile(from, Instant.now().plus(1, ChronoUnit.MINUTES));
        List<String> found = new ArrayList<>();
        for (JsonNode m : after.get("mismatches")) {
            found.add(m.get("subject").stringValue() + " " + m.get("kind").stringValue() + " "
                    + (m.get("charge").isNull()
                            ? m.get("processor_charge").stringValue()
                            : m.get("charge").stringValue()));
        }
        assertThat(found)
                .containsExactlyInAnyOrder(
                        "capture in_processor_not_ledger " + planted,
                        "capture amount_differs " + amended,
                        "capture in_ledger_not_processor " + removed,
                        "refunds in_processor_not_ledger " + refunded,
                        "refunds amount_differs " + clean);
        for (JsonNode m : after.get("mismatches")) {
            if (m.get("kind").stringValue().equals("amount_differs")
                    && m.get("subject").stringValue().equals("capture")) {
                assertThat(m.get("processor_amount").longValue()).isEqualTo(2500);
                assertThat(m.get("ledger_amount").longValue()).isEqualTo(2000);
            }
        }
        assertThat(after.get("mismatch_counts").get("in_processor_not_ledger").intValue())
                .isEqualTo(2);

        // a window that holds none of it finds none of it
        JsonNode earlier = reconcile(from.minus(2, ChronoUnit.HOURS), from.minus(1, ChronoUnit.HOURS));
        assertThat(earlier.get("mismatches").size()).isZero();

        // the scheduled run's meter
        schedule.runOnce();
        assertThat(schedule.open(Mismatch.Kind.IN_PROCESSOR_NOT_LEDGER)).isEqualTo(2);
        assertThat(schedule.open(Mismatch.Kind.AMOUNT_DIFFERS)).isEqualTo(2);
        assertThat(schedule.open(Mismatch.Kind.IN_LEDGER_NOT_PROCESSOR)).isEqualTo(1);
        String scrape = get("/actuator/prometheus", OPERATOR).text();
        assertThat(scrape)
                .containsPattern(
                        "exactly_payments_reconciliation_mismatches\\{[^}]*kind=\"in_ledger_not_processor\"[^}]*\\} 1\\.0");
    }

    @Test
    void badWindowsAreProblemsAndOnlyTheOperatorMayAsk() {
        Answer garbled = get("/v1/operator/reconciliation?from=yesterday", OPERATOR);
        assertThat(garbled.status()).isEqualTo(422);
        assertThat(garbled.text()).contains("from");
        Answer backwards =
                get("/v1/operator/reconciliation?from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", OPERATOR);
        assertThat(backwards.status()).isEqualTo(422);
        Answer tooLong = get("/v1/operator/reconciliation?from=2026-01-01T00:00:00Z&to=2026-12-01T00:00:00Z", OPERATOR);
        assertThat(tooLong.status()).isEqualTo(422);
        assertThat(tooLong.text()).contains("31 days");
        // instants the processor and the database cannot hold are the caller's mistake, not an outage
        Answer farFuture = get("/v1/operator/reconciliation?to=%2B100000-01-01T00:00:00Z", OPERATOR);
        assertThat(farFuture.status()).as(farFuture.text()).isEqualTo(422);
        assertThat(farFuture.text()).contains("9999-12-31T23:59:59Z");
        assertThat(get("/v1/operator/reconciliation?from=-0001-01-01T00:00:00Z&to=-0001-01-02T00:00:00Z", OPERATOR)
                        .status())
                .isEqualTo(422);
        assertThat(get("/v1/operator/reconciliation", ACME).status()).isEqualTo(403);
        assertThat(get("/v1/operator/reconciliation", "sk_nobody").status()).isEqualTo(401);
        Answer defaults = get("/v1/operator/reconciliation", OPERATOR);
        assertThat(defaults.status()).isEqualTo(200);
        assertThat(Instant.parse(defaults.json().get("to").stringValue()))
                .isEqualTo(
                        Instant.parse(defaults.json().get("from").stringValue()).plus(1, ChronoUnit.DAYS));
    }
}
