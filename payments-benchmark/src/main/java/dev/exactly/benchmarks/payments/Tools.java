package dev.exactly.benchmarks.payments;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Programs the benchmark runs: found on the PATH, run to their end. */
final class Tools {
    private Tools() {}

    /** The executable {@code name} on the PATH, if any. */
    static Optional<Path> onPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator, -1)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /**
     * Runs {@code command} with {@code environment} added, waits at most {@code timeout} for it, and returns
     * what it printed (standard output and error); a program that does not end in time or exits with
     * anything but 0 fails with its output.
     */
    static String run(List<String> command, Map<String, String> environment, Duration timeout)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process process = builder.start();
        byte[] output;
        try (InputStream in = process.getInputStream()) {
            output = in.readAllBytes();
        }
        String text = new String(output, StandardCharsets.UTF_8);
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("did not finish: " + String.join(" ", command) + "\n" + text);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException(
                    String.join(" ", command) + " exited with " + process.exitValue() + ":\n" + text);
        }
        return text;
    }
}
