package dev.exactly.benchmarks.store;

import dev.exactly.benchmarks.TextTable;
import java.util.EnumMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * The store benchmark's ratio table: per store, guarded and replay operations per second next to the raw
 * floors of the same server (two raw round trips for a fresh key, one for a replay), and their ratios.
 */
public final class StoreRatios {
    /** A measured rate and its error (99.9 % confidence half-width, as JMH reports it). */
    record Rate(double perSecond, double error) {}

    private final Map<StoreKind, Rate> guarded = new EnumMap<>(StoreKind.class);
    private final Map<StoreKind, Rate> replay = new EnumMap<>(StoreKind.class);
    private final Map<StoreKind, Rate> raw = new EnumMap<>(StoreKind.class);
    private final Map<StoreKind, Rate> rawRead = new EnumMap<>(StoreKind.class);

    /** Sorts JMH results by benchmark method and {@code store} parameter; results without one are not the stores'. */
    public static StoreRatios of(Iterable<RunResult> results) {
        StoreRatios ratios = new StoreRatios();
        for (RunResult result : results) {
            if (result.getParams().getParam("store") == null) {
                continue;
            }
            String benchmark = result.getParams().getBenchmark();
            StoreKind kind = StoreKind.of(result.getParams().getParam("store"));
            Result<?> primary = result.getPrimaryResult();
            Rate rate = new Rate(primary.getScore(), primary.getScoreError());
            String method = benchmark.substring(benchmark.lastIndexOf('.') + 1);
            ratios.put(method, kind, rate);
        }
        return ratios;
    }

    /** Records one rate; for tests and for results gathered without JMH. */
    void put(String method, StoreKind kind, double perSecond) {
        put(method, kind, new Rate(perSecond, Double.NaN));
    }

    private void put(String method, StoreKind kind, Rate rate) {
        switch (method) {
            case "guarded" -> guarded.put(kind, rate);
            case "replay" -> replay.put(kind, rate);
            case "twoRoundTrips" -> raw.put(kind, rate);
            case "oneRoundTrip" -> rawRead.put(kind, rate);
            default -> throw new IllegalArgumentException("not a store benchmark: " + method);
        }
    }

    /** guarded / two raw round trips of {@code kind}, NaN when either is missing. */
    public double guardedToRaw(StoreKind kind) {
        return ratio(guarded.get(kind), raw.get(kind));
    }

    /** replay / one raw read of {@code kind}, NaN when either is missing. */
    public double replayToRaw(StoreKind kind) {
        return ratio(replay.get(kind), rawRead.get(kind));
    }

    public TextTable table() {
        TextTable table = new TextTable(
                "store",
                "guarded ops/s",
                "raw 2 trips ops/s",
                "guarded/raw",
                "replay ops/s",
                "raw 1 trip ops/s",
                "replay/raw");
        for (StoreKind kind : StoreKind.values()) {
            if (!guarded.containsKey(kind)
                    && !replay.containsKey(kind)
                    && !raw.containsKey(kind)
                    && !rawRead.containsKey(kind)) {
                continue;
            }
            table.row(
                    kind.id(),
                    rate(guarded.get(kind)),
                    rate(raw.get(kind)),
                    TextTable.ratio(guardedToRaw(kind)),
                    rate(replay.get(kind)),
                    rate(rawRead.get(kind)),
                    TextTable.ratio(replayToRaw(kind)));
        }
        return table;
    }

    private static String rate(@Nullable Rate rate) {
        if (rate == null) {
            return "-";
        }
        return Double.isFinite(rate.error())
                ? TextTable.rate(rate.perSecond()) + " ± " + TextTable.rate(rate.error())
                : TextTable.rate(rate.perSecond());
    }

    private static double ratio(@Nullable Rate numerator, @Nullable Rate denominator) {
        return numerator == null || denominator == null ? Double.NaN : numerator.perSecond() / denominator.perSecond();
    }
}
