package dev.exactly.chaos;

import static org.awaitility.Awaitility.await;

import dev.exactly.testing.Signals;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * One payment service JVM ({@code java -jar payments-service.jar}) on its own loopback port, configured by
 * environment variables and Spring properties on the command line, logging to a file. It can be killed
 * with {@code SIGKILL}, frozen with {@code SIGSTOP} and resumed, and started again on the same port.
 */
final class ServiceInstance implements AutoCloseable {
    private static final List<String> JVM_OPTIONS =
            List.of("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError");

    private final String name;
    private final int port;
    private final Path jar;
    private final Map<String, String> environment;
    private final List<String> arguments;
    private final Path log;
    private final HttpClient health =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private @Nullable Process process;
    private boolean paused;
    private int starts;

    ServiceInstance(
            String name, int port, Path jar, Map<String, String> environment, List<String> arguments, Path log) {
        this.name = name;
        this.port = port;
        this.jar = jar;
        this.environment = Map.copyOf(environment);
        this.arguments = List.copyOf(arguments);
        this.log = log;
    }

    String name() {
        return name;
    }

    int port() {
        return port;
    }

    URI baseUri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    Path log() {
        return log;
    }

    /** How many times this instance was started. */
    synchronized int starts() {
        return starts;
    }

    synchronized long pid() {
        Process p = process;
        if (p == null) {
            throw new IllegalStateException(name + " is not running");
        }
        return p.pid();
    }

    synchronized boolean alive() {
        return process != null && process.isAlive();
    }

    /** Starts the JVM (without waiting for it to be ready). */
    synchronized void start() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " is already running as pid " + process.pid());
        }
        List<String> command = new ArrayList<>();
        command.add(Workspace.java().toString());
        command.addAll(JVM_OPTIONS);
        command.add("-jar");
        command.add(jar.toString());
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().putAll(environment);
        builder.environment().put("PORT", Integer.toString(port));
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name, e);
        }
        paused = false;
        starts++;
    }

    /** Waits (bounded) until the service answers its health check; fails with the log's tail if it died. */
    void awaitReady(Duration timeout) {
        try {
            await("%s ready".formatted(name))
                    .atMost(timeout)
                    .pollInterval(Duration.ofMillis(200))
                    .ignoreExceptionsMatching(e -> e instanceof IOException)
                    .until(() -> {
                        if (!alive()) {
                            throw new IllegalStateException(name + " exited during start:\n" + Workspace.tail(log, 40));
                        }
                        HttpResponse<Void> r = health.send(
                                HttpRequest.newBuilder(baseUri().resolve("/actuator/health"))
                                        .timeout(Duration.ofSeconds(2))
                                        .GET()
                                        .build(),
                                HttpResponse.BodyHandlers.discarding());
                        return r.statusCode() == 200;
                    });
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException(
                    name + " did not become ready within " + timeout + ":\n" + Workspace.tail(log, 40), e);
        }
    }

    /** {@code kill -9} and waits for the process to be gone. */
    void kill() {
        Process p;
        synchronized (this) {
            p = process;
        }
        if (p == null) {
            return;
        }
        Signals.kill(p.pid());
        waitFor(p, Duration.ofSeconds(10));
    }

    /** {@code kill -STOP}: the JVM freezes with its connections open. */
    synchronized void pause() {
        Signals.stop(pid());
        paused = true;
    }

    /** {@code kill -CONT}. */
    synchronized void resume() {
        Signals.resume(pid());
        paused = false;
    }

    /** Stops the JVM by its PID: resumed if frozen, SIGTERM, then SIGKILL after 10 s. Idempotent. */
    @Override
    public void close() {
        Process p;
        synchronized (this) {
            p = process;
            if (p == null) {
                return;
            }
            if (paused && p.isAlive()) {
                Signals.resume(p.pid());
                paused = false;
            }
        }
        if (p.isAlive()) {
            p.destroy();
            if (!waitFor(p, Duration.ofSeconds(10))) {
                p.destroyForcibly();
                waitFor(p, Duration.ofSeconds(10));
            }
        }
    }

    private static boolean waitFor(Process p, Duration timeout) {
        try {
            return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public String toString() {
        return name + "@" + port;
    }
}
