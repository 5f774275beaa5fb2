package dev.exactly.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.SystemProperties;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The long fault run (tag {@code soak}, excluded from the normal suite):
 * {@code ./mvnw -pl chaos-tests verify -Dgroups=soak -DexcludedGroups=}. Two payment service JVMs on a
 * PostgreSQL server of the test's own (so that it can be crashed), a Redis of its own and a processor
 * process; every fault of BRIEF §8 in turn under a bigger load, each followed by the invariant checker
 * over everything sent so far; then the broken processor the checker must catch. Bounded: each loop is,
 * and the whole run takes well under 15 minutes.
 */
@Tag("soak")
class ChaosSoakTest {
    /** Payments per scenario; {@code -Dexactly.chaos.payments=N} changes it. */
    private static final int PAYMENTS = SystemProperties.integer("exactly.chaos.payments", 400);

    private static final Duration SLOW = Duration.ofMillis(1200);

    private record Scenario(String name, int payments, Supplier<Fault> fault) {}

    @Test
    void everyFaultUnderLoad() {
        List<Scenario> scenarios = List.of(
                new Scenario("baseline", PAYMENTS, () -> Faults.none("no fault")),
                new Scenario("kill9-a", PAYMENTS, () -> Faults.killNine(0, 5, SLOW)),
                new Scenario("sigstop-b", PAYMENTS, () -> Faults.pausePastLease(1, 5, SLOW)),
                new Scenario("kill9-b", PAYMENTS, () -> Faults.killNine(1, 5, SLOW)),
                new Scenario("sigstop-a", PAYMENTS, () -> Faults.pausePastLease(0, 5, SLOW)),
                new Scenario("redis-restart", PAYMENTS, () -> Faults.redisRestart(5)),
                new Scenario("redis-flushall", PAYMENTS, () -> Faults.redisFlush(5, 3)),
                new Scenario("postgres-restart", PAYMENTS, () -> Faults.postgresRestart(5, SLOW)),
                new Scenario("processor-faults", PAYMENTS, () -> Faults.processorFaults(5)),
                new Scenario("slow-processor", PAYMENTS, () -> Faults.slowProcessor(Duration.ofSeconds(4), 5)));
        long start = System.nanoTime();
        SoftAssertions softly = new SoftAssertions();
        try (Topology topology = Topology.start(
                "soak",
                Topology.Settings.twoInstances(20),
                dir -> ChaosDatabase.ownServer(dir.resolve("pgdata")),
                dir -> Processor.startProcess(dir.resolve("psp.log")),
                LoadGenerator.Settings.defaults().withPacing(Duration.ofMillis(25)))) {
            ChaosRun run = new ChaosRun(topology, "soak");
            run.log("topology: " + topology.database() + ", redis "
                    + topology.redis().uri() + ", processor "
                    + topology.processor().baseUri() + ", instances " + topology.instances());
            ChaosRun.Result warm = run.warmUp(60);
            softly.assertThat(warm.report().violations())
                    .as("warm-up: %s", warm.report().describe())
                    .isEmpty();
            for (Scenario s : scenarios) {
                ChaosRun.Result result = run.run(s.name(), s.payments(), s.fault(), 3);
                softly.assertThat(result.report().violations())
                        .as("%s: %s", s.name(), result.report().describe())
                        .isEmpty();
                softly.assertThat(result.evidence().hit())
                        .as("%s hit its window: %s", s.name(), result.evidence().figures())
                        .isTrue();
            }
            ChaosRun.Result last = run.results().getLast();
            run.log("soak: " + run.payments() + " payments, " + run.results().size() + " scenario attempts, "
                    + Duration.ofNanos(System.nanoTime() - start).toSeconds() + " s; final "
                    + last.report().figures());
        }

        ChaosRun.Result broken = BrokenProcessor.run(10);
        softly.assertThat(broken.report().violations())
                .as("the broken processor is caught")
                .anyMatch(v -> v.startsWith("double capture"));
        softly.assertAll();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMinutes(15));
    }
}
