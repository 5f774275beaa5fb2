package dev.exactly.benchmarks.payments;

import dev.exactly.testing.WrkResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The load generator: <a href="https://github.com/wg/wrk">wrk</a>, a separate C process with LuaJIT hooks,
 * run once per phase with {@code charges.lua} (this package's resource), which makes every request and
 * checks every answer. wrk keeps {@code connections} keep-alive connections busy on {@code threads}
 * threads, one request in flight per connection (a closed loop).
 */
final class ChargesWrk {
    private static final String SCRIPT = "charges.lua";
    /** An answer slower than this counts as a timeout (an error). */
    private static final String TIMEOUT = "10s";

    private final Path binary;
    private final Path script;

    private ChargesWrk(Path binary, Path script) {
        this.binary = binary;
        this.script = script;
    }

    /** {@code wrk} on the PATH, if any. */
    static Optional<Path> onPath() {
        return Tools.onPath("wrk");
    }

    /** wrk from the PATH with the script copied into {@code workDir}. */
    static ChargesWrk create(Path workDir) {
        Path binary = onPath().orElseThrow(
                        () -> new IllegalStateException(
                                "wrk is not on the PATH; install it (Debian: apt-get install -y wrk) or run benchmarks/payments-benchmark.sh"));
        Path script = workDir.resolve(SCRIPT);
        try (InputStream in = ChargesWrk.class.getResourceAsStream(SCRIPT)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + SCRIPT);
            }
            Files.copy(in, script);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new ChargesWrk(binary, script);
    }

    /**
     * What wrk reported for one phase.
     *
     * @param responses    answers received
     * @param failed       answers the script rejected (any status but 201 included), or that were not checked
     * @param socketErrors connect, read, write errors and timeouts
     * @param seconds      the phase's duration as wrk measured it
     * @param errorSamples the first few rejected answers and wrk's own complaints
     */
    record Report(
            long responses,
            long failed,
            long socketErrors,
            double seconds,
            double p50Millis,
            double p90Millis,
            double p99Millis,
            double maxMillis,
            List<String> errorSamples) {

        Report {
            errorSamples = List.copyOf(errorSamples);
        }

        /** Answers that passed every check. */
        long good() {
            return responses - failed;
        }

        long errors() {
            return failed + socketErrors;
        }

        double rate() {
            return seconds > 0 ? good() / seconds : 0;
        }
    }

    /** Runs one phase against {@code charges} ({@code .../v1/charges}) and waits for it. */
    Report run(
            URI charges,
            String tag,
            String apiKey,
            int customers,
            long amount,
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
                charges.toString(),
                "--",
                tag,
                apiKey,
                Integer.toString(customers),
                Long.toString(amount),
                Integer.toString(threads));
        String text = Tools.run(command, Map.of(), duration.plusSeconds(60));
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
                wrk.figure("p90_us") / 1000.0,
                wrk.figure("p99_us") / 1000.0,
                wrk.figure("max_us") / 1000.0,
                wrk.samples());
    }
}
