package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.psp.Fault;
import dev.exactly.psp.PspOperation;
import dev.exactly.psp.PspRefund;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Refunds through the processor: idempotent at both ends, never more than the charge in total (also when
 * they race, and at the processor), a processor's refusal recorded and replayed.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RefundTest extends DefaultServiceTest {

    private String charged(String key, long amount, String customer) {
        Answer a = post("/v1/charges", ACME, key, charge(amount, customer));
        assertThat(a.status()).isEqualTo(201);
        return a.json().get("id").stringValue();
    }

    private String processorChargeOf(String chargeId) {
        return (String) rows("SELECT processor_charge_id FROM payments_charge WHERE id = ?", chargeId)
                .getFirst()
                .get("processor_charge_id");
    }

    /** What the processor refunded of a charge in total. */
    private long refundedAtProcessor(String chargeId) {
        String processorCharge = processorChargeOf(chargeId);
        return psp().refunds().stream()
                .filter(r -> r.chargeId().equals(processorCharge))
                .mapToLong(r -> r.amount())
                .sum();
    }

    private long refundRequests() {
        return psp().stats().operation(PspOperation.REFUND).requests();
    }

    @Test
    void aRefundGoesThroughTheProcessorOnceAndIsReplayed() {
        String id = charged("refund-charge-1", 1000, "cus_refund_once");
        Answer first = post("/v1/refunds", ACME, "refund-1", refund(id, 300));
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        assertThat(first.json().get("object").stringValue()).isEqualTo("refund");
        assertThat(first.json().get("status").stringValue()).isEqualTo("succeeded");
        String refundId = first.json().get("id").stringValue();
        long requests = refundRequests();

        Answer again = post("/v1/refunds", ACME, "refund-1", refund(id, 300));
        assertThat(again.status()).isEqualTo(201);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        Answer reused = post("/v1/refunds", ACME, "refund-1", refund(id, 301));
        assertThat(reused.status()).isEqualTo(422);
        assertThat(reused.problemType()).isEqualTo("idempotency-key-reused");
        assertThat(refundRequests()).as("replays never reach the processor").isEqualTo(requests);

        PspRefund atProcessor =
                psp().findRefundByIdempotencyKey("exactly_" + refundId).orElseThrow();
        assertThat(atProcessor.succeeded()).isTrue();
        assertThat(atProcessor.amount()).isEqualTo(300);
        assertThat(atProcessor.chargeId()).isEqualTo(processorChargeOf(id));
        assertThat(atProcessor.metadata())
                .containsEntry("exactly_refund", refundId)
                .containsEntry("exactly_charge", id);
        assertThat(processorRefunds(refundId)).isEqualTo(1);
        assertThat(rows(
                                "SELECT status, processor_refund_id, recovery_point FROM payments_refund WHERE id = ?",
                                refundId)
                        .getFirst())
                .containsEntry("status", "succeeded")
                .containsEntry("processor_refund_id", atProcessor.id())
                .containsEntry("recovery_point", "finished");

        assertThat(get("/v1/charges/" + id, ACME).json().get("amount_refunded").longValue())
                .isEqualTo(300);
        assertThat(get("/v1/customers/cus_refund_once/balance", ACME)
                        .json()
                        .get("available")
                        .get(0)
                        .get("amount")
                        .longValue())
                .isEqualTo(700);
        assertThat(refundEntriesOf(refundId)).isEqualTo(1);
        assertThat(count(
                        "SELECT count(*) FROM ledger_entry WHERE kind = 'refund' AND external_ref = ?"
                                + " AND original_id = (SELECT ledger_entry_id FROM payments_charge WHERE id = ?)",
                        "refund:" + refundId,
                        id))
                .as("linked to the charge's entry")
                .isEqualTo(1);
        assertThat(get("/v1/idempotency-keys/refund-1", ACME)
                        .json()
                        .get("status")
                        .stringValue())
                .isEqualTo("completed");
        assertLedgerBalanced();
    }

    @Test
    void concurrentRefundsThatTogetherExceedTheChargeRefuseTheExcess() throws Exception {
        String id = charged("refund-charge-2", 1000, "cus_refund_race");
        assertThat(post("/v1/refunds", ACME, "race-first", refund(id, 300)).status())
                .isEqualTo(201);
        int racers = 10;
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Answer>> answers = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < racers; i++) {
                String key = "race-" + i;
                answers.add(pool.submit(() -> {
                    go.await();
                    return post("/v1/refunds", ACME, key, refund(id, 100));
                }));
            }
            go.countDown();
            int ok = 0;
            int refused = 0;
            for (Future<Answer> f : answers) {
                Answer a = f.get(60, TimeUnit.SECONDS);
                if (a.status() == 201) {
                    ok++;
                } else {
                    assertThat(a.status()).as(a.text()).isEqualTo(422);
                    assertThat(a.problemType()).isEqualTo("refund-exceeds-charge");
                    refused++;
                }
            }
            assertThat(ok).isEqualTo(7);
            assertThat(refused).isEqualTo(3);
        }
        assertThat(refundedAtProcessor(id))
                .as("never more refunded at the processor than captured")
                .isEqualTo(1000);
        assertThat(get("/v1/charges/" + id, ACME).json().get("amount_refunded").longValue())
                .isEqualTo(1000);
        assertThat(get("/v1/customers/cus_refund_race/balance", ACME)
                        .json()
                        .get("available")
                        .get(0)
                        .get("amount")
                        .longValue())
                .isZero();
        // a refused refund is an answer: replayed, even though nothing changes
        long requests = refundRequests();
        Answer tooMuch = post("/v1/refunds", ACME, "race-too-much", refund(id, 1));
        assertThat(tooMuch.status()).isEqualTo(422);
        assertThat(post("/v1/refunds", ACME, "race-too-much", refund(id, 1)).body())
                .isEqualTo(tooMuch.body());
        assertThat(refundRequests())
                .as("a refusal of the service never reaches the processor")
                .isEqualTo(requests);
        assertLedgerBalanced();
        assertThat(get("/v1/ledger/trial-balance", ACME).json().get("balanced").booleanValue())
                .isTrue();
    }

    @Test
    void onlySucceededChargesOfTheCallerCanBeRefunded() {
        Answer declined =
                post("/v1/charges", ACME, "refund-declined", charge(500, "cus_refund_declined", "tok_chargeDeclined"));
        assertThat(declined.status()).isEqualTo(402);
        String id = declined.json().get("charge").stringValue();
        Answer refused = post("/v1/refunds", ACME, "refund-of-declined", refund(id, 100));
        assertThat(refused.status()).isEqualTo(422);
        assertThat(refused.problemType()).isEqualTo("charge-not-refundable");
        Answer unknown = post("/v1/refunds", ACME, "refund-of-unknown", refund("ch_doesnotexist", 100));
        assertThat(unknown.status()).isEqualTo(404);
        String other = charged("refund-charge-globex", 100, "cus_refund_globex");
        assertThat(post("/v1/refunds", GLOBEX, "refund-of-another-tenant", refund(other, 100))
                        .status())
                .isEqualTo(404);
        Answer tooLarge = post(
                "/v1/refunds",
                ACME,
                "refund-too-large",
                refund(charged("refund-charge-3", 200, "cus_refund_large"), 201));
        assertThat(tooLarge.status()).isEqualTo(422);
        assertThat(tooLarge.problemType()).isEqualTo("refund-exceeds-charge");
        assertThat(tooLarge.json().get("refundable").longValue()).isEqualTo(200);
    }

    @Test
    void aRefusalByTheProcessorIsRecordedReplayedAndReleasesTheReservation() {
        String id = charged("refund-charge-4", 800, "cus_refund_refused");
        psp().failNext(PspOperation.REFUND, 1, Fault.decline("processing_error"));
        Answer failed = post("/v1/refunds", ACME, "refund-refused", refund(id, 800));
        assertThat(failed.status()).as(failed.text()).isEqualTo(402);
        assertThat(failed.problemType()).isEqualTo("refund-failed");
        assertThat(failed.json().get("failure_code").stringValue()).isEqualTo("processing_error");
        String refundId = failed.json().get("refund").stringValue();
        assertThat(psp().findRefundByIdempotencyKey("exactly_" + refundId)
                        .orElseThrow()
                        .succeeded())
                .isFalse();
        long requests = refundRequests();

        Answer again = post("/v1/refunds", ACME, "refund-refused", refund(id, 800));
        assertThat(again.status()).isEqualTo(402);
        assertThat(again.body()).isEqualTo(failed.body());
        assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(refundRequests())
                .as("the refusal is replayed without the processor")
                .isEqualTo(requests);
        assertThat(refundEntriesOf(refundId)).isZero();
        assertThat(get("/v1/charges/" + id, ACME).json().get("amount_refunded").longValue())
                .isZero();

        // nothing stays reserved: the whole charge can still be refunded
        Answer whole = post("/v1/refunds", ACME, "refund-after-refusal", refund(id, 800));
        assertThat(whole.status()).as(whole.text()).isEqualTo(201);
        assertThat(refundedAtProcessor(id)).isEqualTo(800);
        assertLedgerBalanced();
    }

    @Test
    void refundsRecordedBeforeRefundsReachedTheProcessorAreStillReplayed() {
        String id = charged("refund-charge-5", 600, "cus_refund_old");
        Answer first = post("/v1/refunds", ACME, "refund-old", refund(id, 100));
        assertThat(first.status()).isEqualTo(201);
        String refundId = first.json().get("id").stringValue();
        // the row as the previous version wrote it (no downstream key, no processor request), and the
        // durable record purged: the row alone answers
        jdbc.inTransaction(c -> {
            dev.exactly.payments.db.Jdbc.update(c, """
                    UPDATE payments_refund SET downstream_key = NULL, processor_request = NULL, processor_refund_id = NULL,
                           attempts = 0, finished_at = NULL WHERE id = ?""", s -> s.setString(1, refundId));
            return dev.exactly.payments.db.Jdbc.update(c, """
                    DELETE FROM idempotency_records WHERE scope_key = (SELECT scope_key FROM payments_refund WHERE id = ?)""", s -> s.setString(1, refundId));
        });
        Answer replayed = post("/v1/refunds", ACME, "refund-old", refund(id, 100));
        assertThat(replayed.status()).isEqualTo(201);
        assertThat(replayed.body()).isEqualTo(first.body());
        assertThat(get("/v1/idempotency-keys/refund-old", ACME)
                        .json()
                        .get("resource")
                        .get("id")
                        .stringValue())
                .isEqualTo(refundId);
        // and it counts against the charge as before
        Answer rest = post("/v1/refunds", ACME, "refund-old-rest", refund(id, 501));
        assertThat(rest.status()).isEqualTo(422);
        assertThat(rest.json().get("refundable").longValue()).isEqualTo(500);
    }
}
