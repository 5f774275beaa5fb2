package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/** Refunds: idempotent, and never more than the charge in total, also when they race. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RefundTest extends DefaultServiceTest {

    private String charged(String key, long amount, String customer) {
        Answer a = post("/v1/charges", ACME, key, charge(amount, customer));
        assertThat(a.status()).isEqualTo(201);
        return a.json().get("id").stringValue();
    }

    private static String refund(String charge, long amount) {
        return "{\"charge\":\"" + charge + "\",\"amount\":" + amount + "}";
    }

    @Test
    void aRefundIsIdempotent() {
        String id = charged("refund-charge-1", 1000, "cus_refund_once");
        Answer first = post("/v1/refunds", ACME, "refund-1", refund(id, 300));
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        assertThat(first.json().get("object").stringValue()).isEqualTo("refund");
        Answer again = post("/v1/refunds", ACME, "refund-1", refund(id, 300));
        assertThat(again.status()).isEqualTo(201);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        Answer reused = post("/v1/refunds", ACME, "refund-1", refund(id, 301));
        assertThat(reused.status()).isEqualTo(422);
        assertThat(reused.problemType()).isEqualTo("idempotency-key-reused");

        assertThat(get("/v1/charges/" + id, ACME).json().get("amount_refunded").longValue()).isEqualTo(300);
        assertThat(get("/v1/customers/cus_refund_once/balance", ACME).json().get("available").get(0).get("amount").longValue())
                .isEqualTo(700);
        assertThat(count("SELECT count(*) FROM ledger_entry WHERE kind = 'refund' AND external_ref LIKE 'refund:%'"
                + " AND original_id = (SELECT ledger_entry_id FROM payments_charge WHERE id = ?)", id)).isEqualTo(1);
        assertLedgerBalanced();
    }

    @Test
    void concurrentRefundsThatTogetherExceedTheChargeRefuseTheExcess() throws Exception {
        String id = charged("refund-charge-2", 1000, "cus_refund_race");
        assertThat(post("/v1/refunds", ACME, "race-first", refund(id, 300)).status()).isEqualTo(201);
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
        assertThat(get("/v1/charges/" + id, ACME).json().get("amount_refunded").longValue()).isEqualTo(1000);
        assertThat(get("/v1/customers/cus_refund_race/balance", ACME).json().get("available").get(0).get("amount").longValue())
                .isZero();
        // a refused refund is an answer: replayed, even though nothing changes
        Answer tooMuch = post("/v1/refunds", ACME, "race-too-much", refund(id, 1));
        assertThat(tooMuch.status()).isEqualTo(422);
        assertThat(post("/v1/refunds", ACME, "race-too-much", refund(id, 1)).body()).isEqualTo(tooMuch.body());
        assertLedgerBalanced();
        assertThat(get("/v1/ledger/trial-balance", ACME).json().get("balanced").booleanValue()).isTrue();
    }

    @Test
    void onlySucceededChargesOfTheCallerCanBeRefunded() {
        Answer declined = post("/v1/charges", ACME, "refund-declined", charge(500, "cus_refund_declined", "tok_chargeDeclined"));
        assertThat(declined.status()).isEqualTo(402);
        String id = declined.json().get("charge").stringValue();
        Answer refused = post("/v1/refunds", ACME, "refund-of-declined", refund(id, 100));
        assertThat(refused.status()).isEqualTo(422);
        assertThat(refused.problemType()).isEqualTo("charge-not-refundable");
        Answer unknown = post("/v1/refunds", ACME, "refund-of-unknown", refund("ch_doesnotexist", 100));
        assertThat(unknown.status()).isEqualTo(404);
        Answer tooLarge = post("/v1/refunds", ACME, "refund-too-large",
                refund(charged("refund-charge-3", 200, "cus_refund_large"), 201));
        assertThat(tooLarge.status()).isEqualTo(422);
        assertThat(tooLarge.problemType()).isEqualTo("refund-exceeds-charge");
        assertThat(tooLarge.json().get("refundable").longValue()).isEqualTo(200);
    }
}
