package dev.exactly.testing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a benchmark's wrk load script printed when it ended: one line {@code EXACTLY name=value ...} of whole
 * numbers (its counts and latencies), and a line {@code EXACTLY-ERROR ...} per answer that failed its checks.
 * The scripts count {@code responses}, {@code checked} (answers that passed), {@code failed} and wrk's socket
 * errors ({@code connect}, {@code read}, {@code write}, {@code timeout}); the rest is each benchmark's own.
 *
 * @param figures the result line's figures by name
 * @param samples the failed checks the script printed, then one line for answers not checked (when the counts
 *                differ) and one for socket errors (when there were any)
 * @param output  all that wrk printed, for an error's message
 */
public record WrkResult(Map<String, Long> figures, List<String> samples, String output) {
    private static final String RESULT = "EXACTLY ";
    private static final String ERROR = "EXACTLY-ERROR ";

    public WrkResult {
        figures = Map.copyOf(figures);
        samples = List.copyOf(samples);
    }

    /** Reads wrk's output; refuses one without a result line, or with a figure that is not a whole number. */
    public static WrkResult parse(String output) {
        Map<String, Long> figures = null;
        List<String> samples = new ArrayList<>();
        for (String line : output.split("\n", -1)) {
            if (line.startsWith(RESULT)) {
                figures = new HashMap<>();
                for (String pair : line.substring(RESULT.length()).trim().split(" ", -1)) {
                    int eq = pair.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalStateException(
                                "wrk's result line has '" + pair + "', not name=value:\n" + output);
                    }
                    try {
                        figures.put(pair.substring(0, eq), Long.parseLong(pair.substring(eq + 1)));
                    } catch (NumberFormatException e) {
                        throw new IllegalStateException(
                                "wrk's result line has '" + pair + "', not a whole number:\n" + output, e);
                    }
                }
            } else if (line.startsWith(ERROR)) {
                samples.add(line.substring(ERROR.length()));
            }
        }
        if (figures == null) {
            throw new IllegalStateException("wrk printed no result line:\n" + output);
        }
        WrkResult printed = new WrkResult(figures, List.of(), output);
        long unchecked = printed.unchecked();
        if (unchecked != 0) {
            samples.add(unchecked + " answers were not checked");
        }
        if (printed.socketErrors() > 0) {
            samples.add("socket errors: connect " + printed.figure("connect") + ", read " + printed.figure("read")
                    + ", write " + printed.figure("write") + ", timeout " + printed.figure("timeout"));
        }
        return new WrkResult(figures, samples, output);
    }

    /** One figure of the result line; a line without it means the load script and its reader disagree. */
    public long figure(String name) {
        Long value = figures.get(name);
        if (value == null) {
            throw new IllegalStateException("wrk's result line has no " + name + ":\n" + output);
        }
        return value;
    }

    /** Answers wrk received. */
    public long responses() {
        return figure("responses");
    }

    /** Answers that neither passed nor failed the script's checks (not zero: the script missed some). */
    public long unchecked() {
        return responses() - figure("checked");
    }

    /** wrk's socket errors: connections refused, reads and writes that failed, requests timed out. */
    public long socketErrors() {
        return figure("connect") + figure("read") + figure("write") + figure("timeout");
    }
}
