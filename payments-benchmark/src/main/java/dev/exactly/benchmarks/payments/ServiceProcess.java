package dev.exactly.benchmarks.payments;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The payment service under test: {@code java -jar payments-service.jar} on a loopback port, configured
 * by environment variables (as a deployment is) and Spring properties on the command line, logging to a
 * file. The in-process processor stand-in is found through the line the service logs when it starts it.
 */
final class ServiceProcess implements AutoCloseable {
    private static final Pattern PROCESSOR = Pattern.compile("processor stand-in listening on (http://\\S+)");

    private final Process process;
    private final int port;
    private final Path log;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private ServiceProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** Starts the JVM and waits (bounded) until it answers its health check. */
    static ServiceProcess start(
            Path java,
            Path jar,
            List<String> jvmOptions,
            Map<String, String> environment,
            List<String> arguments,
            int port,
            Path log,
            Duration startTimeout) {
        List<String> command = new ArrayList<>();
        command.add(java.toString());
        command.addAll(jvmOptions);
        command.add("-jar");
        command.add(jar.toString());
        command.addAll(arguments);
        ProcessBuilder builder =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(environment);
        builder.environment().put("PORT", Integer.toString(port));
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
        ServiceProcess service = new ServiceProcess(process, port, log);
        try {
            service.awaitReady(startTimeout);
        } catch (RuntimeException e) {
            service.close();
            throw e;
        }
        return service;
    }

    URI baseUri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    long pid() {
        return process.pid();
    }

    /**
     * The CPU time the service's JVM has used so far (user and system, from {@code /proc/<pid>/stat} in
     * clock ticks of 10 ms), or -1 where that is not available.
     */
    long cpuMillis() {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            // the fields after the command's closing parenthesis: state is field 3, utime 14, stime 15
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ", -1);
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The CPU time the JVM's JIT compiler threads have used so far (from {@code /proc/<pid>/task/<tid>/stat},
     * the threads named {@code C1 CompilerThread…} or {@code C2 CompilerThread…}), or -1 where that is not
     * available. The hot code of a charge is large: on a busy machine its compilation goes on long after the
     * warm-up, and it is no part of what a charge costs once compiled.
     */
    long compilerCpuMillis() {
        try (var tasks = Files.list(Path.of("/proc", Long.toString(process.pid()), "task"))) {
            long millis = 0;
            for (Path task : tasks.toList()) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException ended) {
                    continue; // the thread ended meanwhile
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
                    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ", -1);
                    millis += (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10;
                }
            }
            return millis;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The in-process processor stand-in's address, from the service's log. */
    URI processor() {
        Matcher m = PROCESSOR.matcher(logText());
        if (!m.find()) {
            throw new IllegalStateException("the service did not log its processor stand-in:\n" + tail(40));
        }
        return URI.create(m.group(1));
    }

    /** A GET on the service or the processor, its body as text; anything but 200 fails. */
    String get(URI uri, String authorization) {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).GET();
        if (!authorization.isEmpty()) {
            request.header("Authorization", authorization);
        }
        try {
            HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() != 200) {
                throw new IllegalStateException("GET " + uri + ": " + answer.statusCode() + " " + answer.body());
            }
            return answer.body();
        } catch (IOException e) {
            throw new UncheckedIOException("GET " + uri, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A POST of a JSON body with headers (name, value, ...); returns the status and body. */
    HttpResponse<String> post(URI uri, String body, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException("POST " + uri, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void awaitReady(Duration timeout) {
        try {
            await("payment service ready")
                    .atMost(timeout)
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptionsMatching(e -> e instanceof UncheckedIOException)
                    .until(() -> {
                        if (!process.isAlive()) {
                            throw new IllegalStateException("the service exited during start:\n" + tail(40));
                        }
                        return healthUp();
                    });
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException("the service did not become ready within " + timeout + ":\n" + tail(40), e);
        }
    }

    /**
     * Whether the health endpoint says UP. A 503 (DOWN) is "not yet": on a loaded machine a health check of
     * the database or Redis can time out once while the service starts, and the next poll asks again.
     */
    private boolean healthUp() {
        HttpRequest request = HttpRequest.newBuilder(baseUri().resolve("/actuator/health"))
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build();
        try {
            HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
            return answer.statusCode() == 200 && answer.body().contains("UP");
        } catch (IOException e) {
            throw new UncheckedIOException("GET /actuator/health", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The last {@code lines} lines of the service's log. */
    String tail(int lines) {
        List<String> all = logText().lines().toList();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    private String logText() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Stops the JVM by its PID: SIGTERM (a JFR recording is written on exit), then SIGKILL after 60 s. */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
