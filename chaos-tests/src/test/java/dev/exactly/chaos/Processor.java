package dev.exactly.chaos;

import static org.awaitility.Awaitility.await;

import dev.exactly.psp.Capture;
import dev.exactly.psp.PspClient;
import dev.exactly.psp.PspConfig;
import dev.exactly.psp.PspSimulator;
import dev.exactly.psp.PspStats;
import dev.exactly.testing.TestRedis;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The processor stand-in the services call: normally its own process ({@code java -jar psp-simulator.jar}),
 * or, for the deliberately broken mode, a {@link PspSimulator} in this JVM built with
 * {@code honourIdempotencyKeys(false)} (the jar has no command-line switch for that). Either way it is
 * driven over its HTTP admin API: run faults, one-shot faults, the capture log and the fault counters.
 */
final class Processor implements AutoCloseable {
    private final URI baseUri;
    private final @Nullable Process process;
    private final @Nullable PspSimulator inProcess;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final PspClient client;

    private Processor(URI baseUri, @Nullable Process process, @Nullable PspSimulator inProcess) {
        this.baseUri = baseUri;
        this.process = process;
        this.inProcess = inProcess;
        this.client = PspClient.builder(baseUri)
                .requestTimeout(Duration.ofSeconds(20))
                .build();
    }

    /** Starts the simulator jar on a free loopback port and waits until it answers. */
    static Processor startProcess(Path log) {
        int port = TestRedis.freePort();
        Process p;
        try {
            p = new ProcessBuilder(
                            Workspace.java().toString(),
                            "-Xmx256m",
                            "-XX:+UseSerialGC",
                            "-jar",
                            Workspace.copy(Workspace.pspSimulatorJar(), log.getParent())
                                    .toString(),
                            "--port",
                            Integer.toString(port),
                            "--bind",
                            "127.0.0.1")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the processor simulator", e);
        }
        Processor processor = new Processor(URI.create("http://127.0.0.1:" + port), p, null);
        try {
            await("processor ready")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .ignoreExceptionsMatching(e -> e instanceof IOException)
                    .until(() -> {
                        if (!p.isAlive()) {
                            throw new IllegalStateException("the processor exited:\n" + Workspace.tail(log, 20));
                        }
                        return processor.get("/health").statusCode() == 200;
                    });
        } catch (RuntimeException e) {
            processor.close();
            throw e;
        }
        return processor;
    }

    /** A simulator in this JVM, e.g. the broken one that ignores idempotency keys. */
    static Processor startInProcess(PspConfig config) {
        PspSimulator simulator = PspSimulator.start(config);
        return new Processor(simulator.baseUri(), null, simulator);
    }

    URI baseUri() {
        return baseUri;
    }

    /** Replaces the run's faults ({@code POST /v1/faults}, JSON as in the simulator's README). */
    void setFaults(String json) {
        expectOk(post("/v1/faults", json), "set faults");
    }

    /** No run faults, no queued faults. */
    void clearFaults() {
        expectOk(send(HttpRequest.newBuilder(baseUri.resolve("/v1/faults")).DELETE()), "clear faults");
    }

    /** The next {@code count} charge requests suffer {@code faults} (e.g. {@code drop-response}). */
    void failNext(int count, String faults) {
        expectOk(post("/v1/faults/next", "{\"count\":%d,\"faults\":\"%s\"}".formatted(count, faults)), "queue faults");
    }

    List<Capture> captures() {
        return client.captures();
    }

    PspStats stats() {
        return client.stats();
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(baseUri.resolve(path))
                        .timeout(Duration.ofSeconds(5))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path, String json) {
        return send(HttpRequest.newBuilder(baseUri.resolve(path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    private HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return http.send(request.timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void expectOk(HttpResponse<String> response, String what) {
        if (response.statusCode() != 200) {
            throw new IllegalStateException(
                    "processor: " + what + " answered " + response.statusCode() + ": " + response.body());
        }
    }

    /** Stops the simulator (the process by its PID: SIGTERM, then SIGKILL). */
    @Override
    public void close() {
        client.close();
        if (inProcess != null) {
            inProcess.close();
        }
        Process p = process;
        if (p != null && p.isAlive()) {
            p.destroy();
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
