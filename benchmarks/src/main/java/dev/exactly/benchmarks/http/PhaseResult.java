package dev.exactly.benchmarks.http;

import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * What one timed phase (or several merged) measured: requests answered as expected, by kind, errors,
 * the latency histogram (microseconds) and the wall time.
 *
 * @param fresh        fresh-key requests answered 201 and not marked as replays
 * @param replayed     replay requests answered as expected (201; on a guarded endpoint marked replayed)
 * @param errors       requests that failed or were answered otherwise
 * @param latency      latency of every request, microseconds
 * @param elapsedNanos from the first request to the last answer
 * @param errorSamples the first few errors, for the report
 */
public record PhaseResult(long fresh, long replayed, long errors, Histogram latency, long elapsedNanos,
        List<String> errorSamples) {
    /** Latencies above this are recorded as this (60 s). */
    static final long HIGHEST_MICROS = 60_000_000L;
    private static final int MAX_SAMPLES = 5;

    public PhaseResult {
        errorSamples = List.copyOf(errorSamples);
    }

    /** An empty result to merge into. */
    static PhaseResult empty() {
        return new PhaseResult(0, 0, 0, new Histogram(HIGHEST_MICROS, 3), 0, List.of());
    }

    public long requests() {
        return fresh + replayed + errors;
    }

    /** Requests per second. */
    public double rate() {
        return elapsedNanos == 0 ? 0 : requests() * 1e9 / elapsedNanos;
    }

    /** The latency at {@code percentile} (0-100), milliseconds. */
    public double millisAt(double percentile) {
        return latency.getValueAtPercentile(percentile) / 1000.0;
    }

    /** This and {@code other} as if one phase: counts and times added, histograms merged. */
    PhaseResult plus(PhaseResult other) {
        Histogram merged = latency.copy();
        merged.add(other.latency);
        List<String> samples = new ArrayList<>(errorSamples);
        other.errorSamples.stream().limit(Math.max(0, MAX_SAMPLES - samples.size())).forEach(samples::add);
        return new PhaseResult(fresh + other.fresh, replayed + other.replayed, errors + other.errors, merged,
                elapsedNanos + other.elapsedNanos, samples);
    }

    static int maxSamples() {
        return MAX_SAMPLES;
    }
}
