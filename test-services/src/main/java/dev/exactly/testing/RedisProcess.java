package dev.exactly.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code redis-server} child process on a loopback port, stopped by its own PID. Used for the
 * standalone fallback and for the nodes of a test Redis Cluster.
 */
public final class RedisProcess {
    private final Process process;
    private final int port;
    private final Path dir;

    private RedisProcess(Process process, int port, Path dir) {
        this.process = process;
        this.port = port;
        this.dir = dir;
    }

    /**
     * Starts {@code binary} on {@code port} with no persistence plus {@code extraArgs}, and waits (bounded,
     * 10 s) until it answers PING.
     */
    public static RedisProcess start(Path binary, int port, List<String> extraArgs) {
        return start(List.of(), binary, port, extraArgs, Duration.ofSeconds(10));
    }

    /**
     * Starts {@code binary} as {@link #start(Path, int, List)} does, under {@code launcher} (a program and
     * its arguments that run the server, e.g. {@code valgrind --tool=callgrind}), waiting at most
     * {@code ready} for it to answer PING. The process is the launcher's; for one that replaces itself by
     * the server, as valgrind does, {@link #pid()} is the server's.
     */
    public static RedisProcess start(
            List<String> launcher, Path binary, int port, List<String> extraArgs, Duration ready) {
        try {
            Path dir = Files.createTempDirectory("exactly-redis-" + port);
            List<String> command = new ArrayList<>(launcher);
            command.add(binary.toString());
            command.addAll(TestRedis.baseArgs(port, dir));
            command.addAll(extraArgs);
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("redis.log").toFile())
                    .start();
            RedisProcess started = new RedisProcess(process, port, dir);
            started.awaitReady(ready);
            return started;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start redis-server on port " + port, e);
        }
    }

    private void awaitReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "redis-server on port " + port + " exited; see " + dir.resolve("redis.log"));
            }
            try {
                TestRedis.ping(port);
                return;
            } catch (IOException e) {
                last = e;
                java.util.concurrent.locks.LockSupport.parkNanos(
                        Duration.ofMillis(20).toNanos());
            }
        }
        stop();
        throw new IllegalStateException("redis-server on port " + port + " did not answer within " + timeout, last);
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process.pid();
    }

    /** The node's working directory (nodes.conf, log). */
    public Path dir() {
        return dir;
    }

    /** Stops the process (SIGTERM, then SIGKILL after 5 s). */
    public void stop() {
        process.destroy();
        try {
            if (!process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
