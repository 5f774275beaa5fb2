package dev.exactly.benchmarks.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.benchmarks.Machine;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class HttpReportTest {
    private static final Machine MACHINE =
            new Machine(Instant.parse("2026-12-07T12:00:00Z"), 2, "1.00 1.00 1.00", "test");

    @Test
    void theClusterPerNodeIsTheClusterStoreOverTheStandaloneStoreRoundByRound() {
        List<PhaseResult> phases = new ArrayList<>();
        // rounds: the standalone store 100, 200, 100 answers a second; the Cluster store 90, 150, 70
        phases.addAll(rounds(Variant.REDIS, Mix.FRESH, 100, 200, 100));
        phases.addAll(rounds(Variant.REDIS_CLUSTER, Mix.FRESH, 90, 150, 70));
        phases.addAll(rounds(Variant.RAW_REDIS, Mix.FRESH, 120, 120, 120));
        phases.addAll(rounds(Variant.RAW_REDIS_CLUSTER, Mix.FRESH, 108, 96, 102));
        HttpReport report = report(
                List.of(Variant.RAW_REDIS, Variant.REDIS, Variant.RAW_REDIS_CLUSTER, Variant.REDIS_CLUSTER),
                List.of(Mix.FRESH),
                phases);

        // per round 0.90, 0.75, 0.70: the median of the rounds' ratios, not the ratio of the rates (310 / 400)
        assertThat(report.perNode(Mix.FRESH)).hasValue(new HttpReport.Ratio(0.75, 0.7, 0.9));
        assertThat(report.floorsPerNode(Mix.FRESH)).hasValue(new HttpReport.Ratio(0.85, 0.8, 0.9));
        assertThat(report.perNode(Mix.REPLAYS)).isEmpty();

        assertThat(printed(report))
                .contains(
                        "fresh keys   redis-cluster  0.75 vs redis (per node)       spread 0.70-0.90 (target 0.80): NOT met;"
                                + " the floors raw-redis-cluster-2 vs raw-redis-2 0.85");
    }

    @Test
    void aPerNodeFigureAtItsTargetIsMetAndTheMixedMixHasNone() {
        List<PhaseResult> phases = new ArrayList<>();
        phases.addAll(rounds(Variant.REDIS, Mix.REPLAYS, 100, 100, 100));
        phases.addAll(rounds(Variant.REDIS_CLUSTER, Mix.REPLAYS, 80, 85, 79));
        phases.addAll(rounds(Variant.REDIS, Mix.MIXED, 100, 100, 100));
        phases.addAll(rounds(Variant.REDIS_CLUSTER, Mix.MIXED, 50, 50, 50));
        HttpReport report =
                report(List.of(Variant.REDIS, Variant.REDIS_CLUSTER), List.of(Mix.REPLAYS, Mix.MIXED), phases);

        String printed = printed(report);

        // no floors in this run: the line names none
        assertThat(printed)
                .contains("replays      redis-cluster  0.80 vs redis (per node)       spread 0.79-0.85"
                        + " (target 0.80): met\n");
        assertThat(printed).doesNotContain("mixed 9:1    redis-cluster  0.50");
    }

    @Test
    void withoutTheStandaloneStoreInTheRunThereIsNoPerNodeFigure() {
        HttpReport report = report(
                List.of(Variant.RAW_REDIS_CLUSTER, Variant.REDIS_CLUSTER),
                List.of(Mix.FRESH),
                rounds(Variant.REDIS_CLUSTER, Mix.FRESH, 90, 150, 70));

        assertThat(report.perNode(Mix.FRESH)).isEmpty();
        assertThat(printed(report)).doesNotContain("per node");
    }

    private static HttpReport report(List<Variant> variants, List<Mix> mixes, List<PhaseResult> phases) {
        HttpBenchmark.Settings settings =
                new HttpBenchmark.Settings(2, 32, Duration.ZERO, Duration.ofSeconds(1), 3, 1, variants, mixes);
        return new HttpReport(settings, MACHINE, MACHINE, phases, List.of(), 0, List.of());
    }

    /** One phase a round of one second each, answering {@code rates[i]} requests in round i + 1. */
    private static List<PhaseResult> rounds(Variant variant, Mix mix, long... rates) {
        List<PhaseResult> phases = new ArrayList<>();
        for (int i = 0; i < rates.length; i++) {
            phases.add(new PhaseResult(
                    variant,
                    mix,
                    i + 1,
                    rates[i],
                    0,
                    1.0,
                    1.0,
                    2.0,
                    rates[i],
                    null,
                    0,
                    OptionalLong.empty(),
                    List.of()));
        }
        return phases;
    }

    private static String printed(HttpReport report) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
