package dev.exactly.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.stream.Stream;

/**
 * Where things are: the executable jars under test (located from the repository root that the build
 * passes as {@code exactly.repo.root}), the Java launcher of this JVM, and a work directory for the logs
 * of one run.
 */
final class Workspace {
    private static final String BUILD_HINT =
            "build it first: ./mvnw -pl payments-service,psp-simulator -am install -DskipTests (the reactor build "
                    + "of ./mvnw verify builds it before this module)";

    private Workspace() {}

    /** The repository root: {@code exactly.repo.root}, or the parent of the working directory. */
    static Path repoRoot() {
        String configured = System.getProperty("exactly.repo.root");
        Path root = configured == null ? Path.of("..") : Path.of(configured);
        return root.toAbsolutePath().normalize();
    }

    /** {@code payments-service/target/payments-service.jar}; fails with a clear message if it is missing. */
    static Path paymentsServiceJar() {
        Path jar = repoRoot().resolve("payments-service/target/payments-service.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("the payment service jar is missing at " + jar + "; " + BUILD_HINT);
        }
        return jar;
    }

    /** {@code psp-simulator/target/psp-simulator-VERSION.jar}; fails with a clear message if it is missing. */
    static Path pspSimulatorJar() {
        Path target = repoRoot().resolve("psp-simulator/target");
        List<Path> jars;
        try (Stream<Path> files = Files.isDirectory(target) ? Files.list(target) : Stream.empty()) {
            jars = files.filter(p -> {
                        String name = p.getFileName().toString();
                        return name.startsWith("psp-simulator-")
                                && name.endsWith(".jar")
                                && !name.endsWith("-sources.jar")
                                && !name.endsWith("-javadoc.jar")
                                && !name.endsWith("-tests.jar");
                    })
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (jars.isEmpty()) {
            throw new IllegalStateException("the processor simulator jar is missing in " + target + "; " + BUILD_HINT);
        }
        return jars.getLast();
    }

    /**
     * A copy of {@code jar} in {@code dir}: the processes run from the copy, so that a rebuild of the
     * module while they run (which rewrites the jar they load classes from) cannot break them.
     */
    static Path copy(Path jar, Path dir) {
        Path target = dir.resolve(jar.getFileName());
        try {
            return Files.copy(jar, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy " + jar + " to " + dir, e);
        }
    }

    /** The {@code java} launcher of the running JVM (the services run on the same JDK as the tests). */
    static Path java() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /** A new directory for one run's logs and report, under {@code target/chaos}. */
    static Path runDirectory(String name) {
        String base = System.getProperty("exactly.chaos.work");
        Path parent = base == null ? Path.of("target", "chaos") : Path.of(base);
        String stamp =
                LocalDateTime.now(java.time.ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        Path dir = parent.resolve(
                        name + "-" + stamp + "-" + ProcessHandle.current().pid())
                .toAbsolutePath();
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
    }

    /** The last lines of a log file, for failure messages. */
    static String tail(Path log, int lines) {
        try {
            if (!Files.exists(log)) {
                return "(no log at " + log + ")";
            }
            List<String> all = Files.readAllLines(log);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + log + ": " + e + ")";
        }
    }
}
