package dev.exactly.benchmarks.http;

import dev.exactly.benchmarks.Machine;
import dev.exactly.benchmarks.TextTable;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The HTTP benchmark's results: per mix and endpoint the rate over all rounds, the median latencies, the
 * errors, and the ratio to the endpoint's floor, measured per round (the floor ran just before, under
 * the same load) and given as the median with its spread over the rounds.
 *
 * @param settings          how it ran
 * @param before            the machine before the run
 * @param after             the machine after the run
 * @param phases            the measured phases
 * @param loads             the load average at the start of each round
 * @param otherErrors       errors of the warm-up phases
 * @param otherErrorSamples the first few of them
 */
public record HttpReport(
        HttpBenchmark.Settings settings,
        Machine before,
        Machine after,
        List<PhaseResult> phases,
        List<String> loads,
        long otherErrors,
        List<String> otherErrorSamples) {

    /** Issue 11: a Redis Cluster's figures within 0.8 of the standalone server's. */
    static final double PER_NODE_TARGET = 0.8;

    public HttpReport {
        phases = List.copyOf(phases);
        loads = List.copyOf(loads);
        otherErrorSamples = List.copyOf(otherErrorSamples);
    }

    /**
     * A ratio over the rounds.
     *
     * @param median the median of the per-round ratios
     * @param min    the lowest
     * @param max    the highest
     */
    public record Ratio(double median, double min, double max) {}

    /** The measured phases of one endpoint in one mix, by round. */
    public List<PhaseResult> results(Mix mix, Variant variant) {
        return phases.stream()
                .filter(p -> p.mix() == mix && p.variant() == variant)
                .toList();
    }

    /** Answers per second over all rounds. */
    public double rate(Mix mix, Variant variant) {
        List<PhaseResult> results = results(mix, variant);
        double seconds = results.stream().mapToDouble(PhaseResult::seconds).sum();
        return seconds == 0
                ? 0
                : results.stream().mapToLong(PhaseResult::responses).sum() / seconds;
    }

    /** Rate over the floor's rate, round by round; empty if the endpoint has no floor in this run. */
    public Optional<Ratio> ratio(Mix mix, Variant variant) {
        return ratio(mix, variant, variant.floor());
    }

    /**
     * Rate over the fenced floor's rate (fresh keys), round by round; empty if the endpoint has none in this
     * run. A replay reads the record whether its completion was fenced or not: there, the floor is the floor.
     */
    public Optional<Ratio> fencedRatio(Mix mix, Variant variant) {
        return mix == Mix.FRESH ? ratio(mix, variant, variant.fencedFloor()) : Optional.empty();
    }

    private Optional<Ratio> ratio(Mix mix, Variant variant, Optional<Variant> of) {
        Optional<Variant> floor = of.filter(settings.variants()::contains);
        if (floor.isEmpty()) {
            return Optional.empty();
        }
        List<Double> ratios = new ArrayList<>();
        for (PhaseResult result : results(mix, variant)) {
            results(mix, floor.get()).stream()
                    .filter(f -> f.round() == result.round() && f.rate() > 0)
                    .forEach(f -> ratios.add(result.rate() / f.rate()));
        }
        if (ratios.isEmpty()) {
            return Optional.empty();
        }
        ratios.sort(null);
        int n = ratios.size();
        double median = n % 2 == 1 ? ratios.get(n / 2) : (ratios.get(n / 2 - 1) + ratios.get(n / 2)) / 2;
        return Optional.of(new Ratio(median, ratios.getFirst(), ratios.getLast()));
    }

    /**
     * The Redis Cluster store's rate over the standalone Redis store's, round by round: what the same guard
     * gives on a Cluster of this run's nodes against one server (issue 11's "per node" figure); empty unless
     * both ran.
     */
    public Optional<Ratio> perNode(Mix mix) {
        return ratio(mix, Variant.REDIS_CLUSTER, Optional.of(Variant.REDIS));
    }

    /**
     * The same for the floors, the Cluster's raw round trips over the standalone server's: what the Cluster
     * itself costs on this machine (its nodes share the cores with everything else), whatever guard it runs.
     */
    public Optional<Ratio> floorsPerNode(Mix mix) {
        return ratio(mix, Variant.RAW_REDIS_CLUSTER, Optional.of(Variant.RAW_REDIS));
    }

    /** The least Cluster per node figure this project aims at, for fresh keys and replays. */
    static Optional<Double> perNodeTarget(Mix mix) {
        return mix == Mix.MIXED ? Optional.empty() : Optional.of(PER_NODE_TARGET);
    }

    /** The ratio this project aims at for {@code variant} in {@code mix}, if any. */
    static Optional<Double> target(Mix mix, Variant variant) {
        if (mix == Mix.MIXED) {
            return Optional.empty();
        }
        return switch (variant) {
            case MEMORY -> mix == Mix.FRESH ? Optional.of(0.8) : Optional.empty();
            case REDIS, REDIS_CLUSTER -> Optional.of(0.9);
            case POSTGRES -> Optional.of(mix == Mix.FRESH ? 0.8 : 0.9);
            default -> Optional.empty();
        };
    }

    /** Errors in all phases, measured or not. */
    public long errors() {
        return otherErrors + phases.stream().mapToLong(PhaseResult::errors).sum();
    }

    /** No error anywhere: every answer passed its checks and no key ran where it must not. */
    public boolean clean() {
        return errors() == 0;
    }

    public TextTable table() {
        TextTable table = new TextTable(
                "mix",
                "endpoint",
                "req/s",
                "p50 ms",
                "p99 ms",
                "errors",
                "floor",
                "vs floor",
                "spread",
                "target",
                "server CPU µs/req",
                "redis cmds/req",
                "redis µs/req",
                "redis CPU µs/req",
                "postgres CPU µs/req");
        for (Mix mix : Mix.values()) {
            for (Variant variant : settings.variants()) {
                List<PhaseResult> results = results(mix, variant);
                if (results.isEmpty()) {
                    continue;
                }
                Optional<Ratio> ratio = ratio(mix, variant);
                long responses =
                        results.stream().mapToLong(PhaseResult::responses).sum();
                List<RedisCommandStats.Delta> redis = results.stream()
                        .map(PhaseResult::redis)
                        .filter(java.util.Objects::nonNull)
                        .toList();
                table.row(
                        mix.title(),
                        variant.name(mix),
                        TextTable.rate(rate(mix, variant)),
                        TextTable.millis(median(
                                results.stream().map(PhaseResult::p50Millis).toList())),
                        TextTable.millis(median(
                                results.stream().map(PhaseResult::p99Millis).toList())),
                        Long.toString(
                                results.stream().mapToLong(PhaseResult::errors).sum()),
                        variant.floor()
                                .filter(settings.variants()::contains)
                                .map(f -> f.name(mix))
                                .orElse("-"),
                        ratio.map(r -> TextTable.ratio(r.median())).orElse("-"),
                        ratio.map(r -> TextTable.ratio(r.min()) + "-" + TextTable.ratio(r.max()))
                                .orElse("-"),
                        target(mix, variant)
                                .filter(t -> ratio.isPresent())
                                .map(t -> "≥ " + TextTable.ratio(t))
                                .orElse("-"),
                        String.format(
                                "%.1f",
                                results.stream()
                                                .mapToLong(PhaseResult::serverCpuNanos)
                                                .sum()
                                        / 1000.0
                                        / Math.max(1, responses)),
                        redis.isEmpty()
                                ? "-"
                                : String.format(
                                        "%.2f",
                                        redis.stream()
                                                        .mapToDouble(d -> d.callsPer(1))
                                                        .sum()
                                                / responses),
                        redis.isEmpty()
                                ? "-"
                                : String.format(
                                        "%.1f",
                                        redis.stream()
                                                        .mapToDouble(d -> d.microsPer(1))
                                                        .sum()
                                                / responses),
                        redis.isEmpty()
                                ? "-"
                                : String.format(
                                        "%.1f",
                                        redis.stream()
                                                        .mapToDouble(d -> d.cpuMicrosPer(1))
                                                        .sum()
                                                / responses),
                        postgresCpu(results, responses));
            }
        }
        return table;
    }

    /** The PostgreSQL server's CPU time per answer over the phases, where every phase measured it. */
    private static String postgresCpu(List<PhaseResult> results, long responses) {
        if (results.stream().anyMatch(r -> r.postgresCpuMicros().isEmpty())) {
            return "-";
        }
        return String.format(
                "%.1f",
                results.stream()
                                .mapToLong(r -> r.postgresCpuMicros().getAsLong())
                                .sum()
                        / (double) Math.max(1, responses));
    }

    public void print(PrintStream out) {
        out.println();
        out.println("before: " + before.describe());
        out.println("after:  " + after.describe());
        out.println("load average at each round: " + String.join("; ", loads));
        out.println();
        table().print(out);
        out.println();
        for (Mix mix : Mix.values()) {
            for (Variant variant : settings.variants()) {
                List<PhaseResult> results = results(mix, variant);
                long responses =
                        results.stream().mapToLong(PhaseResult::responses).sum();
                results.stream()
                        .map(PhaseResult::redis)
                        .filter(java.util.Objects::nonNull)
                        .reduce((a, b) -> merge(a, b))
                        .ifPresent(d -> out.printf(
                                "redis, %s %s: %s%n", mix.title(), variant.name(mix), d.describe(responses)));
            }
        }
        out.println();
        for (Mix mix : Mix.values()) {
            for (Variant variant : settings.variants()) {
                Optional<Ratio> ratio = ratio(mix, variant);
                Optional<Double> target = target(mix, variant);
                if (ratio.isPresent() && target.isPresent()) {
                    out.printf(
                            "%-12s %-14s %s vs %-22s %s (target %s): %s%n",
                            mix.title(),
                            variant.name(mix),
                            TextTable.ratio(ratio.get().median()),
                            variant.floor().orElseThrow().name(mix),
                            "spread " + TextTable.ratio(ratio.get().min()) + "-"
                                    + TextTable.ratio(ratio.get().max()),
                            TextTable.ratio(target.get()),
                            ratio.get().median() >= target.get() ? "met" : "NOT met");
                }
                fencedRatio(mix, variant)
                        .ifPresent(fenced -> out.printf(
                                "%-12s %-14s %s vs %-22s %s (the least a fenced completion costs on Redis before 8.4)%n",
                                mix.title(),
                                variant.name(mix),
                                TextTable.ratio(fenced.median()),
                                variant.fencedFloor().orElseThrow().name(mix),
                                "spread " + TextTable.ratio(fenced.min()) + "-" + TextTable.ratio(fenced.max())));
            }
        }
        for (Mix mix : Mix.values()) {
            Optional<Ratio> perNode = perNode(mix);
            Optional<Double> target = perNodeTarget(mix);
            if (perNode.isPresent() && target.isPresent()) {
                out.printf(
                        "%-12s %-14s %s vs %-22s %s (target %s): %s%s%n",
                        mix.title(),
                        Variant.REDIS_CLUSTER.name(mix),
                        TextTable.ratio(perNode.get().median()),
                        Variant.REDIS.name(mix) + " (per node)",
                        "spread " + TextTable.ratio(perNode.get().min()) + "-"
                                + TextTable.ratio(perNode.get().max()),
                        TextTable.ratio(target.get()),
                        perNode.get().median() >= target.get() ? "met" : "NOT met",
                        floorsPerNode(mix)
                                .map(floors -> "; the floors " + Variant.RAW_REDIS_CLUSTER.name(mix) + " vs "
                                        + Variant.RAW_REDIS.name(mix) + " " + TextTable.ratio(floors.median()))
                                .orElse(""));
            }
        }
        out.println();
        long errors = errors();
        out.println(
                errors == 0
                        ? "correctness: every answer passed its checks; no key ran twice; no replay ran the handler"
                        : "correctness: " + errors + " ERRORS");
        otherErrorSamples.forEach(sample -> out.println("error: " + sample));
        for (PhaseResult result : phases) {
            result.errorSamples().stream()
                    .limit(5)
                    .forEach(sample -> out.println("error: round " + result.round() + " "
                            + result.mix().title() + " " + result.variant().name(result.mix()) + ": " + sample));
        }
        out.println();
        out.print(table().markdown());
    }

    private static RedisCommandStats.Delta merge(RedisCommandStats.Delta a, RedisCommandStats.Delta b) {
        java.util.Map<String, RedisCommandStats.Stat> merged = new java.util.HashMap<>(a.commands());
        b.commands()
                .forEach((command, stat) -> merged.merge(
                        command,
                        stat,
                        (x, y) -> new RedisCommandStats.Stat(x.calls() + y.calls(), x.micros() + y.micros())));
        return new RedisCommandStats.Delta(java.util.Map.copyOf(merged), a.cpuMicros() + b.cpuMicros());
    }

    private static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
