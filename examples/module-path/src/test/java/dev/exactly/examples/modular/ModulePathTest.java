package dev.exactly.examples.modular;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestPostgres;
import dev.exactly.testing.TestRedis;
import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The example as a user on the module path runs it: its own JVM, {@code --module-path} its classes and exactly
 * its runtime dependencies, {@code --module} its main class. Nothing is on the class path, so every module's
 * descriptor is what decides: what it reads, what it exports, and where its SQL and Lua are read from.
 */
class ModulePathTest {

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis", "postgres"})
    void theActionRunsOnceAndItsRetryIsReplayedOnEveryStore(String store) throws Exception {
        String address = switch (store) {
            case "redis" -> TestRedis.uri();
            case "postgres" -> TestPostgres.jdbcUrl();
            default -> "";
        };
        Map<String, String> printed = run(store, address);
        assertThat(printed)
                .containsEntry("store", store)
                .containsEntry("runs", "1")
                .containsEntry("first", "EXECUTED")
                .containsEntry("second", "REPLAYED")
                .containsEntry("answer", "{\"transfer\":\"tr_1\"}");
        if (store.equals("postgres")) {
            assertThat(printed.get("ledger-schema")).isIn("created", "present");
        }
    }

    @Test
    void theModulesExportTheirApiAndNotTheirInternalPackages() throws Exception {
        Map<String, String> exports = run("modules");
        assertThat(exports)
                .containsEntry(
                        "exports.dev.exactly.idempotency",
                        "dev.exactly.idempotency,dev.exactly.idempotency.memory,dev.exactly.idempotency.spi");
        assertThat(exports).containsEntry("exports.dev.exactly.idempotency.redis", "dev.exactly.idempotency.redis");
        assertThat(exports)
                .containsEntry("exports.dev.exactly.idempotency.postgres", "dev.exactly.idempotency.postgres");
        assertThat(exports).containsEntry("exports.dev.exactly.ledger", "dev.exactly.ledger");
    }

    @Test
    void codeOnTheModulePathCannotCompileAgainstAnInternalPackage(@TempDir Path sources) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        String api = compile(javac, sources.resolve("api"), """
                import dev.exactly.idempotency.IdempotencyEngine;
                import dev.exactly.idempotency.redis.RedisIdempotencyStore;
                class Probe { IdempotencyEngine engine; RedisIdempotencyStore store; }
                """);
        assertThat(api).as("the API compiles").isEmpty();
        for (String internal : List.of(
                "dev.exactly.idempotency.internal.Hashing",
                "dev.exactly.idempotency.redis.internal.LuaScript",
                "dev.exactly.ledger.internal.Jdbc")) {
            String refused = compile(javac, sources.resolve(internal), "import " + internal + ";\nclass Probe { }\n");
            String pkg = internal.substring(0, internal.lastIndexOf('.'));
            assertThat(refused).as(internal).contains("package " + pkg + " is not visible");
        }
    }

    /** javac's diagnostics for {@code source} in a module that requires the example's dependencies. */
    private static String compile(JavaCompiler javac, Path root, String source) throws IOException {
        Path probe = Files.createDirectories(root.resolve("src/probe"));
        Files.writeString(probe.resolve("module-info.java"), """
                module probe {
                    requires dev.exactly.idempotency.redis;
                    requires dev.exactly.ledger;
                }
                """);
        Files.writeString(probe.resolve("Probe.java"), source);
        StringWriter diagnostics = new StringWriter();
        javac.getTask(
                        diagnostics,
                        null,
                        null,
                        List.of(
                                "--module-path",
                                dependencies(),
                                "-d",
                                root.resolve("out").toString(),
                                "-proc:none"),
                        null,
                        javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)
                                .getJavaFileObjects(probe.resolve("module-info.java"), probe.resolve("Probe.java")))
                .call();
        return diagnostics.toString();
    }

    /** Runs the example's main class on the module path and returns what it printed, name by value. */
    private static Map<String, String> run(String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--module-path",
                System.getProperty("example.classes") + File.pathSeparator + dependencies(),
                "--module",
                "dev.exactly.examples.modular/dev.exactly.examples.modular.ModularApp"));
        command.addAll(List.of(arguments));
        Path output = Files.createTempFile("module-path-example", ".out");
        try {
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            String text = Files.readString(output);
            assertThat(process.isAlive())
                    .as("the example ended within a minute: %s", text)
                    .isFalse();
            assertThat(process.exitValue()).as(text).isZero();
            return printed(text);
        } finally {
            Files.deleteIfExists(output);
        }
    }

    private static Map<String, String> printed(String text) {
        Map<String, String> printed = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0 && !line.contains(" ")) {
                printed.put(line.substring(0, eq), line.substring(eq + 1).strip());
            }
        }
        return printed;
    }

    /** The example's runtime dependencies (written by the build). */
    private static String dependencies() throws IOException {
        return Files.readString(Path.of(System.getProperty("example.modulePath")))
                .strip();
    }
}
