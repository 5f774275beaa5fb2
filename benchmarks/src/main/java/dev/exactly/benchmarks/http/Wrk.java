package dev.exactly.benchmarks.http;

import dev.exactly.testing.WrkResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The load generator: <a href="https://github.com/wg/wrk">wrk</a>, a separate process written in C with
 * LuaJIT hooks, run once per phase with the script {@code phase.lua} (this package's resource), which
 * makes every request and checks every answer. wrk keeps {@code connections} HTTP/1.1 keep-alive
 * connections busy on {@code threads} event-loop threads, one request in flight per connection.
 */
final class Wrk {
    private static final String SCRIPT = "phase.lua";
    /** An answer slower than this counts as a timeout (an error). */
    private static final String TIMEOUT = "10s";

    private final Path binary;
    private final Path script;

    private Wrk(Path binary, Path script) {
        this.binary = binary;
        this.script = script;
    }

    /** {@code wrk} on the PATH, if any. */
    static Optional<Path> onPath() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator, -1)) {
            Path candidate = Path.of(dir, "wrk");
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** wrk from the PATH with the phase script copied into {@code workDir}. */
    static Wrk create(Path workDir) {
        Path binary = onPath().orElseThrow(
                        () -> new IllegalStateException(
                                "wrk is not on the PATH; install it (Debian: apt-get install -y wrk) or run benchmarks/http-benchmark.sh"));
        Path script = workDir.resolve(SCRIPT);
        try (InputStream in = Wrk.class.getResourceAsStream(SCRIPT)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + SCRIPT);
            }
            Files.copy(in, script);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Wrk(binary, script);
    }

    /**
     * What wrk reported for one phase.
     *
     * @param responses    answers received
     * @param failed       answers the script's checks rejected (any status but 201 included)
     * @param socketErrors connect, read, write errors and timeouts
     * @param seconds      the phase's duration as wrk measured it
     * @param p50Millis    median latency
     * @param p99Millis    99th percentile latency
     * @param errorSamples the first few rejected answers and wrk's own complaints
     * @param freshAnswers answers to fresh keys that passed their checks
     */
    record Report(
            long responses,
            long failed,
            long socketErrors,
            double seconds,
            double p50Millis,
            double p99Millis,
            List<String> errorSamples,
            long freshAnswers) {}

    /**
     * Runs one phase against {@code uri} and waits for it.
     *
     * @param tag    unique to the phase: fresh keys are {@code tag-<thread>-<n>}, in {@code order}
     * @param order  where the keys fall in a sorted index
     * @param marked whether replays must come back marked as replays (see {@code phase.lua})
     * @param keys   the replay keys and their first answers (replay and mixed modes)
     */
    Report run(
            URI uri,
            Mix mix,
            String tag,
            KeyOrder order,
            boolean marked,
            Path keys,
            int threads,
            int connections,
            Duration duration)
            throws IOException, InterruptedException {
        List<String> command = List.of(
                binary.toString(),
                "-t",
                Integer.toString(threads),
                "-c",
                Integer.toString(connections),
                "-d",
                duration.toSeconds() + "s",
                "--timeout",
                TIMEOUT,
                "--latency",
                "-s",
                script.toString(),
                uri.toString(),
                "--",
                mix.mode(),
                tag,
                marked ? "1" : "0",
                keys.toString(),
                order.mode());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output;
        try (InputStream in = process.getInputStream()) {
            output = in.readAllBytes();
        }
        if (!process.waitFor(duration.toSeconds() + 60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("wrk did not finish: " + String.join(" ", command));
        }
        String text = new String(output, StandardCharsets.UTF_8);
        if (process.exitValue() != 0) {
            throw new IllegalStateException("wrk exited with " + process.exitValue() + ": " + text);
        }
        return parse(text);
    }

    static Report parse(String output) {
        WrkResult wrk = WrkResult.parse(output);
        return new Report(
                wrk.responses(),
                wrk.figure("failed") + Math.abs(wrk.unchecked()),
                wrk.socketErrors(),
                wrk.figure("duration_us") / 1e6,
                wrk.figure("p50_us") / 1000.0,
                wrk.figure("p99_us") / 1000.0,
                wrk.samples(),
                wrk.figure("fresh"));
    }
}
