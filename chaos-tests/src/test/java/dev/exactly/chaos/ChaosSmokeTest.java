package dev.exactly.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The short fault run of the normal test suite: two payment service JVMs sharing a fresh PostgreSQL
 * schema, a Redis of the test's own and a processor process; {@code kill -9} of one instance mid-request
 * and {@code SIGSTOP} of the other past the lease, each under a load of duplicated requests and followed by
 * the invariant checker (after a gentle warm-up and a baseline without faults); then the
 * deliberately broken processor that the checker must catch.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChaosSmokeTest {
    private static final int PAYMENTS = 30;
    private static final Duration SLOW_PROCESSOR = Duration.ofMillis(1200);

    private @Nullable Topology topology;
    private @Nullable ChaosRun run;

    @BeforeAll
    void start() {
        topology = Topology.start(
                "smoke",
                Topology.Settings.twoInstances(8),
                dir -> ChaosDatabase.sharedSchema("chaos_smoke"),
                dir -> Processor.startProcess(dir.resolve("psp.log")),
                LoadGenerator.Settings.defaults());
        run = new ChaosRun(topology, "smoke");
        run.log("topology: " + topology.database() + ", redis "
                + topology.redis().uri() + ", processor " + topology.processor().baseUri() + ", instances "
                + topology.instances());
    }

    @AfterAll
    void stop() {
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    @Order(0)
    void duplicatedLoadWithoutFaults() {
        ChaosRun.Result warm = run().warmUp(10);
        assertThat(warm.report().violations()).as(warm.report()::describe).isEmpty();

        ChaosRun.Result result = run().run("baseline", 15, () -> Faults.none("no fault"), 1);

        assertThat(result.report().violations()).as(result.report()::describe).isEmpty();
        assertThat(result.report().figures().captures())
                .isEqualTo(result.report().figures().succeeded());
    }

    @Test
    @Order(1)
    void killNineOfAnInstanceMidRequestThenRestart() {
        ChaosRun.Result result = run().run("kill9", PAYMENTS, () -> Faults.killNine(0, 3, SLOW_PROCESSOR), 3);

        assertThat(result.report().violations()).as(result.report()::describe).isEmpty();
        assertThat(result.evidence().hit())
                .as("the kill hit requests in flight: %s", result.evidence().figures())
                .isTrue();
        assertThat(topology().instance(0).starts())
                .as("the killed instance was started again")
                .isGreaterThanOrEqualTo(2);
    }

    @Test
    @Order(2)
    void sigstopOfAnInstancePastTheLeaseThenSigcont() {
        ChaosRun.Result result = run().run("sigstop", PAYMENTS, () -> Faults.pausePastLease(1, 3, SLOW_PROCESSOR), 3);

        assertThat(result.report().violations()).as(result.report()::describe).isEmpty();
        assertThat(result.evidence().hit())
                .as(
                        "the freeze outlived the lease of in-flight work: %s",
                        result.evidence().figures())
                .isTrue();
    }

    /**
     * The checker must catch a real double charge (see {@link BrokenProcessor}): a processor that ignores
     * idempotency keys, and processor calls slower than the lease, so that recovery calls again while the
     * first call is in flight.
     */
    @Test
    @Order(3)
    void theCheckerCatchesADoubleCaptureByAProcessorThatIgnoresIdempotencyKeys() {
        ChaosRun.Result result = BrokenProcessor.run(6);

        assertThat(result.report().clean())
                .as("the checker must report the broken processor")
                .isFalse();
        assertThat(result.report().violations()).anyMatch(v -> v.startsWith("double capture"));
        assertThat(result.report().figures().captures())
                .isGreaterThan(result.report().figures().succeeded());
        assertThat(result.report().figures().journalEntries())
                .isEqualTo(result.report().figures().succeeded());
        assertThat(result.report().figures().takeovers()).isPositive();
    }

    private ChaosRun run() {
        if (run == null) {
            throw new IllegalStateException("not started");
        }
        return run;
    }

    private Topology topology() {
        if (topology == null) {
            throw new IllegalStateException("not started");
        }
        return topology;
    }
}
