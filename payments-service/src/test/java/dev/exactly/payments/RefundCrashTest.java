package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.payments.charge.RecoveryWorker;
import dev.exactly.payments.db.Jdbc;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A refund killed at each point between its phases (the test's {@link Crashes} observer throws where a
 * crash would stop it) is finished either by the client's retry once the dead owner's lease ended, or by
 * the recovery worker: one refund at the processor, one journal entry, the retry gets the refund. The
 * worker's schedule is off, so each test decides who recovers; a retry while the lease runs gets 409.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(Crashes.Installed.class)
class RefundCrashTest extends ServiceTest {

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_refund_crash");
        registry.add("exactly.payments.recovery.enabled", () -> "false");
    }

    @Autowired
    RecoveryWorker worker;

    @Autowired
    Crashes crashes;

    enum Recoverer {
        CLIENT_RETRY,
        WORKER
    }

    @ParameterizedTest(name = "crash {0}, recovered by the client's retry")
    @EnumSource(Crashes.Point.class)
    void crashThenClientRetry(Crashes.Point point) {
        crashAndRecover(point, Recoverer.CLIENT_RETRY);
    }

    @ParameterizedTest(name = "crash {0}, recovered by the worker")
    @EnumSource(Crashes.Point.class)
    void crashThenWorker(Crashes.Point point) {
        crashAndRecover(point, Recoverer.WORKER);
    }

    private void crashAndRecover(Crashes.Point point, Recoverer recoverer) {
        String name = point.wire() + "-" + recoverer.name().toLowerCase(Locale.ROOT);
        Answer charged = post("/v1/charges", ACME, "rc-charge-" + name, charge(900, "cus_rc_" + name));
        assertThat(charged.status()).as(charged.text()).isEqualTo(201);
        String chargeId = charged.json().get("id").stringValue();
        String key = "rc-" + name;
        String body = refund(chargeId, 400);
        crashes.armRefund(chargeId, point);
        Answer crashed = post("/v1/refunds", ACME, key, body);
        assertThat(crashed.status()).as("the request died").isGreaterThanOrEqualTo(500);
        String refundId = (String) rows("SELECT id FROM payments_refund WHERE charge_id = ?", chargeId)
                .getFirst()
                .get("id");
        assertThat(refundStatus(refundId)).isEqualTo("pending");
        assertThat(processorRefunds(refundId)).isEqualTo(point == Crashes.Point.AFTER_CHARGE_CREATED ? 0 : 1);
        assertThat(get("/v1/idempotency-keys/" + key, ACME)
                        .json()
                        .get("recovery_point")
                        .stringValue())
                .isEqualTo("refund_created");

        // a retry while the dead owner's lease runs: 409, never a second execution
        Answer early = post("/v1/refunds", ACME, key, body);
        assertThat(early.status()).as(early.text()).isEqualTo(409);
        assertThat(early.problemType()).isEqualTo("idempotency-key-in-use");

        expireLease(refundId);
        AtomicReference<Answer> recovered = new AtomicReference<>();
        if (recoverer == Recoverer.CLIENT_RETRY) {
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        Answer a = post("/v1/refunds", ACME, key, body);
                        recovered.set(a);
                        return a.status() == 201;
                    });
        } else {
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        worker.runOnce();
                        return refundStatus(refundId).equals("succeeded");
                    });
            recovered.set(post("/v1/refunds", ACME, key, body));
            assertThat(recovered.get().status()).isEqualTo(201);
            assertThat(recovered.get().header("Idempotent-Replayed")).isEqualTo("true");
        }
        assertThat(recovered.get().json().get("id").stringValue()).isEqualTo(refundId);
        assertThat(processorRefunds(refundId)).as("one refund at the processor").isEqualTo(1);
        assertThat(psp().refunds().stream()
                        .filter(r -> r.chargeId().equals(processorChargeOf(chargeId)))
                        .count())
                .as("under any key")
                .isEqualTo(1);
        assertThat(refundEntriesOf(refundId)).as("one journal entry").isEqualTo(1);
        assertThat(count("SELECT count(*) FROM payments_refund WHERE charge_id = ?", chargeId))
                .isEqualTo(1);
        assertThat(count("""
                SELECT r.takeovers FROM idempotency_records r JOIN payments_refund f ON f.scope_key = r.scope_key
                WHERE f.id = ?""", refundId))
                .as("the dead owner's lease was really taken over")
                .isPositive();
        assertThat(post("/v1/refunds", ACME, key, body).body())
                .isEqualTo(recovered.get().body());
        assertThat(get("/v1/charges/" + chargeId, ACME)
                        .json()
                        .get("amount_refunded")
                        .longValue())
                .isEqualTo(400);
        assertLedgerBalanced();
    }

    private String refundStatus(String refundId) {
        return (String) rows("SELECT status FROM payments_refund WHERE id = ?", refundId)
                .getFirst()
                .get("status");
    }

    private String processorChargeOf(String chargeId) {
        return (String) rows("SELECT processor_charge_id FROM payments_charge WHERE id = ?", chargeId)
                .getFirst()
                .get("processor_charge_id");
    }

    /** Lets the dead owner's lease run out now (the lease is the default 10 s here). */
    private void expireLease(String refundId) {
        jdbc.inTransaction(c -> Jdbc.update(c, """
                UPDATE idempotency_records SET lease_expires_at = now()
                WHERE status = 'PROCESSING' AND scope_key = (SELECT scope_key FROM payments_refund WHERE id = ?)""", s -> s.setString(1, refundId)));
    }
}
