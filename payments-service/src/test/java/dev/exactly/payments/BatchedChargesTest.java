package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Many charges at once, double-clicks and declines among them, with one transaction per phase at a time, so
 * that the charges waiting for it commit together: each key charges once, both clicks get the same answer,
 * every capture has its one journal entry, the books balance, and the charges did share transactions.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BatchedChargesTest extends ServiceTest {
    private static final int KEYS = 24;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_batch");
        registry.add("exactly.payments.commit-batch.max-in-flight", () -> "1");
        registry.add("exactly.payments.commit-batch.max-charges", () -> "6");
    }

    @Test
    void chargesCommittedTogetherAreEachChargedOnceAndAnsweredAlike() throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Answer>> first = new ArrayList<>();
        List<Future<Answer>> second = new ArrayList<>();
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < KEYS; i++) {
                String key = "batched-" + i;
                String body = i % 6 == 5
                        ? charge(300 + i, "cus_batch_" + (i % 8), "tok_chargeDeclinedInsufficientFunds")
                        : charge(300 + i, "cus_batch_" + (i % 8));
                for (List<Future<Answer>> clicks : List.of(first, second)) {
                    clicks.add(clients.submit(() -> {
                        go.await();
                        return post("/v1/charges", ACME, key, body);
                    }));
                }
            }
            go.countDown();
            Set<String> captured = new HashSet<>();
            for (int i = 0; i < KEYS; i++) {
                Answer a = first.get(i).get(60, TimeUnit.SECONDS);
                Answer b = second.get(i).get(60, TimeUnit.SECONDS);
                int expected = i % 6 == 5 ? 402 : 201;
                assertThat(a.status()).as("key %d", i).isEqualTo(expected);
                assertThat(b.status()).as("key %d, the other click", i).isEqualTo(expected);
                assertThat(b.body()).as("key %d: both clicks get one answer", i).isEqualTo(a.body());
                if (expected == 201) {
                    String id = a.json().get("id").stringValue();
                    captured.add(id);
                    assertThat(psp().captureCount("exactly_" + id))
                            .as("captures of %s", id)
                            .isEqualTo(1);
                    assertThat(entriesOf(id)).as("entries of %s", id).isEqualTo(1);
                    assertThat(chargeStatus(id)).isEqualTo("succeeded");
                }
            }
            assertThat(captured).hasSize(KEYS - KEYS / 6);
        }
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer LIKE 'cus_batch_%'"))
                .isEqualTo(KEYS);
        assertThat(count(
                        "SELECT count(*) FROM payments_charge WHERE customer LIKE 'cus_batch_%' AND status = 'failed'"))
                .isEqualTo(KEYS / 6);
        assertLedgerBalanced();
        // the finished charges' row versions were written by fewer phase-3 transactions than charges
        assertThat(count("SELECT count(DISTINCT xmin::text) FROM payments_charge WHERE customer LIKE 'cus_batch_%'"))
                .isLessThan(KEYS);
    }
}
