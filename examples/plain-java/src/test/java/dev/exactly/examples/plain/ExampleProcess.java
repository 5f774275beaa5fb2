package dev.exactly.examples.plain;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The example started as a user runs it: its own JVM, on exactly its runtime class path (what its pom
 * declares, nothing the tests add), its output kept in files.
 */
final class ExampleProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)/v1/charges");

    private final Process process;
    private final Path out;
    private final Path err;
    private final int port;

    private ExampleProcess(Process process, Path out, Path err, int port) {
        this.process = process;
        this.out = out;
        this.err = err;
        this.port = port;
    }

    /** Starts {@code ChargeServer} with {@code arguments} and waits until it listens. */
    static ExampleProcess start(Path logDirectory, String name, String... arguments) throws IOException {
        Files.createDirectories(logDirectory);
        Path out = logDirectory.resolve(name + ".out");
        Path err = logDirectory.resolve(name + ".err");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                runtimeClassPath(),
                "dev.exactly.examples.plain.ChargeServer",
                "port=0"));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        int[] port = new int[1];
        try {
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        if (!process.isAlive()) {
                            throw new IllegalStateException("the example exited with " + process.exitValue() + ":\n"
                                    + Files.readString(out) + Files.readString(err));
                        }
                        Matcher matcher = LISTENING.matcher(Files.readString(out));
                        if (matcher.find()) {
                            port[0] = Integer.parseInt(matcher.group(1));
                            return true;
                        }
                        return false;
                    });
        } catch (RuntimeException e) {
            process.destroyForcibly();
            throw e;
        }
        return new ExampleProcess(process, out, err, port[0]);
    }

    /** The example's classes and its runtime dependencies (written by the build). */
    static String runtimeClassPath() {
        try {
            String dependencies = Files.readString(Path.of(System.getProperty("example.classPath")))
                    .strip();
            return System.getProperty("example.classes") + File.pathSeparator + dependencies;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    int port() {
        return port;
    }

    /** Everything the process wrote to standard output and standard error so far. */
    String output() {
        try {
            return Files.readString(out) + Files.readString(err);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops it as Ctrl-C does (its shutdown hook closes the server and the store). */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
