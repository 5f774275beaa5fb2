package dev.exactly.benchmarks.http;

import dev.exactly.benchmarks.Machine;
import dev.exactly.benchmarks.TextTable;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The HTTP benchmark's results: per mix and endpoint the measured rate, latency and errors, the ratio to
 * the unguarded endpoint in the same mix, and the correctness checks (no request failed in any phase;
 * each handler ran exactly once per fresh key, and on the unguarded endpoint once per request).
 *
 * @param settings     how it ran
 * @param before       the machine before the run
 * @param after        the machine after the run
 * @param measured     per mix, per endpoint: the measured rounds merged
 * @param errors       failed requests in any phase (preparation, warm-up, measured), per endpoint
 * @param expected     handler executions expected per endpoint
 * @param executions   handler executions counted per endpoint
 * @param errorSamples the first few failures
 */
public record HttpReport(HttpBenchmark.Settings settings, Machine before, Machine after,
        Map<Mix, Map<Variant, PhaseResult>> measured, Map<Variant, Long> errors, Map<Variant, Long> expected,
        Map<Variant, Long> executions, List<String> errorSamples) {

    public HttpReport {
        measured = Map.copyOf(measured);
        errors = Map.copyOf(errors);
        expected = Map.copyOf(expected);
        executions = Map.copyOf(executions);
        errorSamples = List.copyOf(errorSamples);
    }

    /** The measured result of one endpoint in one mix. */
    public PhaseResult result(Mix mix, Variant variant) {
        return Objects.requireNonNull(measured.getOrDefault(mix, Map.of()).get(variant), mix + " " + variant);
    }

    /** req/s of {@code variant} over req/s of the unguarded endpoint, in {@code mix}. */
    public double ratio(Mix mix, Variant variant) {
        return result(mix, variant).rate() / result(mix, Variant.UNGUARDED).rate();
    }

    /** Whether the handler of {@code variant} ran exactly as often as expected. */
    public boolean executionsMatch(Variant variant) {
        return Objects.equals(expected.get(variant), executions.get(variant));
    }

    /** No failed request, and every handler ran as often as expected. */
    public boolean clean() {
        return settings.variants().stream().allMatch(v -> errors.getOrDefault(v, 0L) == 0 && executionsMatch(v));
    }

    public TextTable table() {
        TextTable table = new TextTable("mix", "endpoint", "requests", "req/s", "p50 ms", "p99 ms", "errors",
                "vs unguarded");
        for (Mix mix : settings.mixes()) {
            for (Variant variant : settings.variants()) {
                PhaseResult result = result(mix, variant);
                table.row(mix.name(), variant.id(), String.format("%,d", result.requests()),
                        TextTable.rate(result.rate()), TextTable.millis(result.millisAt(50)),
                        TextTable.millis(result.millisAt(99)), Long.toString(result.errors()),
                        TextTable.ratio(ratio(mix, variant)));
            }
        }
        return table;
    }

    public void print(PrintStream out) {
        out.println();
        out.println("before: " + before.describe());
        out.println("after:  " + after.describe());
        out.println();
        table().print(out);
        out.println();
        for (Variant variant : settings.variants()) {
            out.printf("%-10s handler ran %,d times, expected %,d (%s); %d failed requests in all phases%n",
                    variant.id(), executions.get(variant), expected.get(variant),
                    executionsMatch(variant) ? "ok" : "MISMATCH", errors.getOrDefault(variant, 0L));
        }
        errorSamples.forEach(sample -> out.println("error: " + sample));
        out.println();
        out.print(table().markdown());
    }

    static Builder builder(HttpBenchmark.Settings settings, Machine before) {
        return new Builder(settings, before);
    }

    /** Collects phases as they finish. */
    static final class Builder {
        private final HttpBenchmark.Settings settings;
        private final Machine before;
        private final Map<Mix, Map<Variant, PhaseResult>> measured = new LinkedHashMap<>();
        private final Map<Variant, Long> errors = new EnumMap<>(Variant.class);
        private final Map<Variant, Long> expected = new EnumMap<>(Variant.class);
        private final Map<Variant, Long> executions = new EnumMap<>(Variant.class);
        private final List<String> errorSamples = new ArrayList<>();

        private Builder(HttpBenchmark.Settings settings, Machine before) {
            this.settings = settings;
            this.before = before;
        }

        void prepared(Variant variant, PhaseResult result) {
            count(variant, result);
        }

        void warmup(Variant variant, PhaseResult result) {
            count(variant, result);
        }

        void measured(Mix mix, Variant variant, PhaseResult result) {
            count(variant, result);
            measured.computeIfAbsent(mix, m -> new EnumMap<>(Variant.class))
                    .merge(variant, result, PhaseResult::plus);
        }

        void executions(Variant variant, long count) {
            executions.put(variant, count);
        }

        /** Every answered fresh key ran the handler once; replays ran it only when unguarded. */
        private void count(Variant variant, PhaseResult result) {
            long runs = result.fresh() + (variant.guarded() ? 0 : result.replayed());
            expected.merge(variant, runs, Long::sum);
            errors.merge(variant, result.errors(), Long::sum);
            result.errorSamples().stream().limit(Math.max(0, 10 - errorSamples.size()))
                    .forEach(sample -> errorSamples.add(variant.id() + " " + sample));
        }

        HttpReport build(Machine after) {
            return new HttpReport(settings, before, after, measured, errors, expected, executions, errorSamples);
        }
    }
}
