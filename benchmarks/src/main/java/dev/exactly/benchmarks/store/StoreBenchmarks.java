package dev.exactly.benchmarks.store;

import dev.exactly.benchmarks.Machine;
import dev.exactly.benchmarks.fingerprint.FingerprintBenchmark;
import java.io.PrintStream;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs the store benchmark and its raw baselines in one JMH run and prints the ratio table:
 *
 * <pre>
 * benchmarks/store-benchmark.sh                 # every store: builds, then runs with the same JDK
 * benchmarks/store-benchmark.sh -p store=redis  # JMH options pass through
 * </pre>
 *
 * Without an include pattern it runs {@link StoreBenchmark} and {@link RawBaselineBenchmark}; with
 * {@code -h} or {@code -l} it behaves as JMH's own main.
 */
public final class StoreBenchmarks {
    private StoreBenchmarks() {}

    public static void main(String[] args) throws Exception {
        CommandLineOptions cli = new CommandLineOptions(args);
        if (cli.shouldHelp()
                || cli.shouldList()
                || cli.shouldListWithParams()
                || cli.shouldListProfilers()
                || cli.shouldListResultFormats()) {
            org.openjdk.jmh.Main.main(args);
            return;
        }
        PrintStream out = System.out;
        Machine before = Machine.sample(InstantSource.system());
        List<RunResult> results = new ArrayList<>();
        if (!cli.getIncludes().isEmpty()) {
            results.addAll(new Runner(cli).run());
        } else {
            // one store at a time, its raw baseline right before its guarded operations, so that a change
            // in the machine's load between stores does not skew a ratio
            for (StoreKind kind : stores(cli)) {
                ChainedOptionsBuilder options = new OptionsBuilder()
                        .parent(cli)
                        .include(StoreBenchmark.class.getName() + "\\.")
                        .param("store", kind.id());
                if (kind.hasRawBaseline()) {
                    options.include(RawBaselineBenchmark.class.getName() + "\\.");
                }
                results.addAll(new Runner(options.build()).run());
            }
        }
        Machine after = Machine.sample(InstantSource.system());
        if (FingerprintBenchmark.report(results, before, after, out)) {
            return;
        }
        StoreRatios ratios = StoreRatios.of(results);
        out.println();
        out.println("Store benchmark: ops/s summed over all benchmark threads; guarded = claim + complete on a"
                + " fresh key, replay = a completed key, raw = one set-if-absent round trip on the same server");
        out.println("before: " + before.describe());
        out.println("after:  " + after.describe());
        out.println();
        ratios.table().print(out);
        out.println();
        out.print(ratios.table().markdown());
    }

    /** The stores named with {@code -p store=...}, or all of them. */
    private static List<StoreKind> stores(CommandLineOptions cli) {
        org.openjdk.jmh.util.Optional<Collection<String>> named = cli.getParameter("store");
        return named.hasValue() ? named.get().stream().map(StoreKind::of).toList() : List.of(StoreKind.values());
    }
}
