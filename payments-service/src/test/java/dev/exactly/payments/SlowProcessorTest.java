package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.psp.Fault;
import dev.exactly.psp.FaultSettings;
import dev.exactly.psp.PspStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Processor calls far slower than the durable lease (1 s here): the owner keeps its record alive while it
 * waits, so neither the recovery worker (sweeping every 100 ms) nor a retry takes it over and calls the
 * processor a second time; and the worker takes over and resumes at most {@code recovery.parallelism}
 * charges at once, while retries of the charges it holds are refused.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(Crashes.Installed.class)
class SlowProcessorTest extends ServiceTest {
    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final int PARALLELISM = 2;

    @Autowired
    Crashes crashes;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_slow");
        registry.add("exactly.payments.lease", () -> LEASE.toMillis() + "ms");
        registry.add("exactly.idempotency.lease", () -> LEASE.toMillis() + "ms");
        registry.add("exactly.payments.recovery.interval", () -> "100ms");
        registry.add("exactly.payments.recovery.parallelism", () -> Integer.toString(PARALLELISM));
        registry.add("exactly.payments.pool-size", () -> "6");
    }

    @Test
    void aProcessorCallOfFourLeasesIsMadeOnceWhileDuplicatesWaitForItsAnswer() {
        PspStats before = psp().stats();
        psp().failNext(1, Fault.latency(LEASE.multipliedBy(4)));
        String body = charge(4200, "cus_slow");
        long started = System.nanoTime();
        CompletableFuture<Answer> first =
                CompletableFuture.supplyAsync(() -> post("/v1/charges", ACME, "slow-1", body));
        await().atMost(Duration.ofSeconds(10)).until(() -> psp().stats().requests() > before.requests());
        // once the durable record was renewed past two leases after its claim, duplicates arrive; they wait
        // for the first answer (the route's policy)
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> count("""
                SELECT count(*) FROM idempotency_records r JOIN payments_charge c ON c.scope_key = r.scope_key
                WHERE c.customer = 'cus_slow' AND r.status = 'PROCESSING'
                  AND r.lease_expires_at > r.created_at + interval '2 seconds'""") == 1);
        List<CompletableFuture<Answer>> duplicates = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            duplicates.add(CompletableFuture.supplyAsync(() -> post("/v1/charges", ACME, "slow-1", body)));
        }
        Answer answer = first.join();
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(answer.status()).as(answer.text()).isEqualTo(201);
        assertThat(took).as("the call outlived the lease several times").isGreaterThan(LEASE.multipliedBy(3));
        String id = answer.json().get("id").stringValue();
        for (CompletableFuture<Answer> duplicate : duplicates) {
            Answer replay = duplicate.join();
            assertThat(replay.status()).as(replay.text()).isEqualTo(201);
            assertThat(replay.json().get("id").stringValue()).isEqualTo(id);
            assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        }
        PspStats after = psp().stats();
        assertThat(after.requests() - before.requests()).as("processor calls").isEqualTo(1);
        assertThat(after.replays() - before.replays())
                .as("second calls answered from the processor's record")
                .isZero();
        assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
        assertThat(entriesOf(id)).isEqualTo(1);
        assertThat(count("""
                SELECT r.takeovers FROM idempotency_records r JOIN payments_charge c ON c.scope_key = r.scope_key
                WHERE c.id = ?""", id)).as("nobody took the record over").isZero();
        assertThat(count("SELECT attempts FROM payments_charge WHERE id = ?", id))
                .isZero();
        assertLedgerBalanced();
    }

    @Test
    void theWorkerResumesAtMostItsParallelismAtOnceWhileRetriesOfItsChargesAreRefused() {
        int charges = 6;
        PspStats before = psp().stats();
        // each call takes 1.5 leases, so the worker's rounds overlap the leases of the charges still waiting
        psp().setFaults(FaultSettings.custom()
                .latency(LEASE.multipliedBy(3).dividedBy(2), Duration.ZERO)
                .build());
        AtomicLong maxInFlight = new AtomicLong();
        // the processor's own books, read every few milliseconds on a thread of their own (the requests below
        // take a while on a busy machine and would miss a short overlap)
        java.util.concurrent.atomic.AtomicBoolean settled = new java.util.concurrent.atomic.AtomicBoolean();
        Thread sampler = Thread.ofVirtual().start(() -> {
            while (!settled.get()) {
                PspStats now = psp().stats();
                maxInFlight.accumulateAndGet(
                        (now.requests() - before.requests()) - (now.captures() - before.captures()), Math::max);
                java.util.concurrent.locks.LockSupport.parkNanos(
                        Duration.ofMillis(5).toNanos());
            }
        });
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < charges; i++) {
            String customer = "cus_recover_" + i;
            crashes.arm(customer, Crashes.Point.AFTER_CHARGE_CREATED);
            Answer crashed = post("/v1/charges", ACME, "recover-" + i, charge(700 + i, customer));
            assertThat(crashed.status())
                    .as("the request died before the processor")
                    .isGreaterThanOrEqualTo(500);
            ids.add(chargeIdByDownstreamPrefix(customer));
        }
        AtomicLong refusedRetries = new AtomicLong();
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(150))
                .until(() -> {
                    // clients retry the charges the worker holds (a retry of a record nobody holds yet would resume
                    // that charge itself, legitimately, and its processor call would not be the worker's): in flight
                    for (int i = 0; i < charges; i++) {
                        if (count("""
                        SELECT count(*) FROM idempotency_records r JOIN payments_charge c ON c.scope_key = r.scope_key
                        WHERE c.id = ? AND r.status = 'PROCESSING' AND r.takeovers > 0
                          AND r.lease_expires_at > statement_timestamp()""", ids.get(i)) == 1) {
                            Answer retry =
                                    post("/v1/charges", ACME, "recover-" + i, charge(700 + i, "cus_recover_" + i));
                            assertThat(retry.status()).as(retry.text()).isIn(201, 409);
                            if (retry.status() == 409) {
                                assertThat(retry.problemType()).isEqualTo("idempotency-key-in-use");
                                refusedRetries.incrementAndGet();
                            }
                        }
                    }
                    return ids.stream().allMatch(id -> chargeStatus(id).equals("succeeded"));
                });
        settled.set(true);
        try {
            sampler.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        psp().clearFaults();

        assertThat(maxInFlight.get()).as("processor calls in flight at once").isEqualTo(PARALLELISM);
        assertThat(refusedRetries.get())
                .as("retries that found the record held")
                .isPositive();
        PspStats after = psp().stats();
        assertThat(after.requests() - before.requests())
                .as("one processor call per charge")
                .isEqualTo(charges);
        assertThat(after.replays() - before.replays()).as("second calls").isZero();
        for (String id : ids) {
            assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
            assertThat(entriesOf(id)).isEqualTo(1);
            assertThat(count("""
                    SELECT r.takeovers FROM idempotency_records r JOIN payments_charge c ON c.scope_key = r.scope_key
                    WHERE c.id = ?""", id))
                    .as("taken over once, by the worker, and kept")
                    .isEqualTo(1);
        }
        assertLedgerBalanced();
    }
}
