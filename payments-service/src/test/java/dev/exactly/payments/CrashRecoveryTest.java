package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.payments.charge.RecoveryWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * A request killed at each recovery point (the test's {@link Crashes} observer throws where a crash would
 * stop it; what was committed stays) is finished either by the client's retry after the lease expired or by the recovery
 * worker: one capture at the processor, one journal entry, and the retry gets the charge. The worker's
 * schedule is off here, so each test decides who recovers, and the tests end the dead owner's lease
 * themselves (a retry before that gets 409).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(Crashes.Installed.class)
class CrashRecoveryTest extends ServiceTest {

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_crash");
        registry.add("exactly.payments.recovery.enabled", () -> "false");
    }

    @Autowired
    RecoveryWorker worker;

    @Autowired
    AtomicPhases phases;

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
        String customer = "cus_" + point.name().toLowerCase(Locale.ROOT) + "_"
                + recoverer.name().toLowerCase(Locale.ROOT);
        String key = "crash-" + point.wire() + "-" + recoverer;
        String body = charge(3100, customer);
        crashes.arm(customer, point);
        Answer crashed = post("/v1/charges", ACME, key, body);
        assertThat(crashed.status()).as("the request died").isGreaterThanOrEqualTo(500);
        String chargeId = chargeIdByDownstreamPrefix(customer);
        String downstream = "exactly_" + chargeId;
        assertThat(chargeStatus(chargeId)).isEqualTo("pending");
        long capturedAtCrash = psp().captureCount(downstream);
        assertThat(capturedAtCrash).isEqualTo(point == Crashes.Point.AFTER_CHARGE_CREATED ? 0 : 1);

        JsonNode status = get("/v1/idempotency-keys/" + key, ACME).json();
        assertThat(status.get("status").stringValue()).isEqualTo("processing");
        assertThat(status.get("recovery_point").stringValue()).isEqualTo("charge_created");
        assertThat(status.get("lease_expires").isString()).isTrue();

        // a retry while the dead owner's lease runs: 409, never a second execution
        Answer early = post("/v1/charges", ACME, key, body);
        assertThat(early.status()).as(early.text()).isEqualTo(409);
        assertThat(early.problemType()).isEqualTo("idempotency-key-in-use");
        assertThat(early.header("Retry-After")).isNotEmpty();

        expireLease(chargeId);
        AtomicReference<Answer> recovered = new AtomicReference<>();
        if (recoverer == Recoverer.CLIENT_RETRY) {
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        Answer a = post("/v1/charges", ACME, key, body);
                        recovered.set(a);
                        return a.status() == 201;
                    });
        } else {
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        worker.runOnce();
                        return chargeStatus(chargeId).equals("succeeded");
                    });
            recovered.set(post("/v1/charges", ACME, key, body));
            assertThat(recovered.get().status()).isEqualTo(201);
            assertThat(recovered.get().header("Idempotent-Replayed")).isEqualTo("true");
        }
        assertThat(recovered.get().json().get("id").stringValue()).isEqualTo(chargeId);
        assertThat(psp().captureCount(downstream)).as("one capture").isEqualTo(1);
        assertThat(entriesOf(chargeId)).as("one journal entry").isEqualTo(1);
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = ?", customer))
                .isEqualTo(1);
        assertThat(count("""
                SELECT r.takeovers FROM idempotency_records r JOIN payments_charge c ON c.scope_key = r.scope_key
                WHERE c.id = ?""", chargeId))
                .as("the dead owner's lease was really taken over")
                .isPositive();
        Answer again = post("/v1/charges", ACME, key, body);
        assertThat(again.body()).isEqualTo(recovered.get().body());
        assertThat(get("/v1/idempotency-keys/" + key, ACME).json().get("status").stringValue())
                .isEqualTo("completed");
        assertLedgerBalanced();
    }

    /**
     * Lets the dead owner's lease run out now instead of waiting for it (the lease is the default 10 s
     * here, so that a retry before this point is sure to find it live, however slow the machine).
     */
    private void expireLease(String chargeId) {
        jdbc.inTransaction(c -> dev.exactly.payments.db.Jdbc.update(c, """
                UPDATE idempotency_records SET lease_expires_at = now()
                WHERE status = 'PROCESSING' AND scope_key = (SELECT scope_key FROM payments_charge WHERE id = ?)""", s -> s.setString(1, chargeId)));
    }

    @Test
    void aPendingChargesRecordNeverExpiresSoTheWorkerFindsItAfterAnyOutage() {
        String body = charge(999, "cus_outage");
        String chargeId = crashBeforeFinish("cus_outage", "outage-1", body);
        // however long the service stays down, the record of an open charge is not purged: it has no expiry
        // until the charge is finished
        assertThat(count("""
                SELECT count(*) FROM idempotency_records r JOIN payments_charge c ON c.scope_key = r.scope_key
                WHERE c.id = ? AND r.expires_at = 'infinity'""", chargeId)).isEqualTo(1);
        assertThat(get("/v1/idempotency-keys/outage-1", ACME)
                        .json()
                        .get("expires")
                        .isNull())
                .isTrue();
        expireLease(chargeId);
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    worker.runOnce();
                    return chargeStatus(chargeId).equals("succeeded");
                });
        Answer retry = post("/v1/charges", ACME, "outage-1", body);
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.json().get("id").stringValue()).isEqualTo(chargeId);
        assertThat(psp().captureCount("exactly_" + chargeId)).isEqualTo(1);
        assertThat(entriesOf(chargeId)).isEqualTo(1);
        assertThat(get("/v1/idempotency-keys/outage-1", ACME)
                        .json()
                        .get("expires")
                        .isString())
                .isTrue();
    }

    @Test
    void aClientRetryResumesAPendingChargeWhoseRecordWasDeletedByHand() {
        String body = charge(998, "cus_orphan");
        String chargeId = crashBeforeFinish("cus_orphan", "orphan-1", body);
        jdbc.inTransaction(c -> dev.exactly.payments.db.Jdbc.update(c, """
                DELETE FROM idempotency_records WHERE scope_key = (SELECT scope_key FROM payments_charge WHERE id = ?)""", s -> s.setString(1, chargeId)));
        // the retry claims the key afresh, finds the charge row and resumes it: the processor is asked first
        Answer retry = post("/v1/charges", ACME, "orphan-1", body);
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.json().get("id").stringValue()).isEqualTo(chargeId);
        assertThat(chargeStatus(chargeId)).isEqualTo("succeeded");
        assertThat(psp().captureCount("exactly_" + chargeId)).isEqualTo(1);
        assertThat(entriesOf(chargeId)).isEqualTo(1);
    }

    @Test
    void anOwnerThatLostItsRecordBeforePhase3CommitsNothingAndRecoveryFinishesTheCharge() {
        String customer = "cus_stolen";
        String body = charge(997, customer);
        // another owner takes the durable record while the processor call is under way
        crashes.afterProcessorAnswer(
                customer,
                charge -> jdbc.inTransaction(c -> dev.exactly.payments.db.Jdbc.update(
                        c,
                        "UPDATE idempotency_records SET owner_token = 'another-owner' WHERE scope_key = ?",
                        s -> s.setString(1, charge.scopeKey().hash()))));
        Answer lost = post("/v1/charges", ACME, "stolen-1", body);
        assertThat(lost.status()).as(lost.text()).isNotEqualTo(201);
        String chargeId = chargeIdByDownstreamPrefix(customer);
        // phase 3 sent its writes with its commit: its guard refused, and the commit apart saw the lost fence
        assertThat(chargeStatus(chargeId)).isEqualTo("pending");
        assertThat(entriesOf(chargeId)).isZero();
        assertThat(count("SELECT count(*) FROM payments_event WHERE subject_id = ?", chargeId))
                .isZero();
        assertThat(count("""
                SELECT count(*) FROM idempotency_records r JOIN payments_charge c ON c.scope_key = r.scope_key
                WHERE c.id = ? AND r.status = 'PROCESSING' AND r.owner_token = 'another-owner'""", chargeId)).isEqualTo(1);
        expireLease(chargeId);
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    worker.runOnce();
                    return chargeStatus(chargeId).equals("succeeded");
                });
        assertThat(psp().captureCount("exactly_" + chargeId)).isEqualTo(1);
        assertThat(entriesOf(chargeId)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM payments_event WHERE subject_id = ?", chargeId))
                .isEqualTo(1);
        Answer retry = post("/v1/charges", ACME, "stolen-1", body);
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.json().get("id").stringValue()).isEqualTo(chargeId);
        assertLedgerBalanced();
    }

    /** Sends a charge that dies just before its phase 3 commits; returns the pending charge's id. */
    private String crashBeforeFinish(String customer, String key, String body) {
        crashes.arm(customer, Crashes.Point.BEFORE_FINISH);
        assertThat(post("/v1/charges", ACME, key, body).status()).isGreaterThanOrEqualTo(500);
        return chargeIdByDownstreamPrefix(customer);
    }

    @Test
    void concurrentWorkersTakeDisjointBatches() throws Exception {
        int charges = 20;
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < charges; i++) {
            String customer = "cus_workers_" + i;
            crashes.arm(customer, Crashes.Point.AFTER_PROCESSOR_CALL);
            Answer crashed = post("/v1/charges", ACME, "workers-" + i, charge(100 + i, customer));
            assertThat(crashed.status()).isGreaterThanOrEqualTo(500);
            ids.add(chargeIdByDownstreamPrefix(customer));
        }
        ids.forEach(this::expireLease);
        int parallelism = phases.recoveryPolicy().parallelism();
        int workers = 4;
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> taken = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(workers)) {
            for (int w = 0; w < workers; w++) {
                taken.add(pool.submit(() -> {
                    go.await();
                    // rounds until nothing is left; a round takes over at most the worker's parallelism
                    int mine = 0;
                    for (int round = worker.runOnce(); round > 0; round = worker.runOnce()) {
                        assertThat(round).isLessThanOrEqualTo(parallelism);
                        mine += round;
                    }
                    return mine;
                }));
            }
            go.countDown();
            int total = 0;
            for (Future<Integer> f : taken) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            assertThat(total)
                    .as("each abandoned charge taken over exactly once")
                    .isEqualTo(charges);
        }
        for (String id : ids) {
            assertThat(count("""
                    SELECT r.takeovers FROM idempotency_records r JOIN payments_charge c ON c.scope_key = r.scope_key
                    WHERE c.id = ?""", id)).as("taken over by one worker only").isEqualTo(1);
        }
        for (String id : ids) {
            assertThat(chargeStatus(id)).isEqualTo("succeeded");
            assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
            assertThat(entriesOf(id)).isEqualTo(1);
        }
        assertLedgerBalanced();
    }
}
