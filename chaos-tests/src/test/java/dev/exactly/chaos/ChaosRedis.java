package dev.exactly.chaos;

import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.TestRedis;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The services' hot tier: a {@code redis-server} of this test's own on a free loopback port, so that
 * restarting it or flushing it never touches the Redis other tests share. The binary is
 * {@code redis-server} from the PATH, or the Linux x86-64 build that the embedded-redis artifact carries.
 */
final class ChaosRedis implements AutoCloseable {
    private final Path binary;
    private final int port;
    private @Nullable RedisProcess process;
    private int restarts;

    private ChaosRedis(Path binary, int port) {
        this.binary = binary;
        this.port = port;
        this.process = RedisProcess.start(binary, port, List.of());
    }

    static ChaosRedis start(Path workDir) {
        return new ChaosRedis(TestRedis.redisServerBinary(workDir), TestRedis.freePort());
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    int port() {
        return port;
    }

    synchronized long pid() {
        RedisProcess p = process;
        if (p == null) {
            throw new IllegalStateException("redis is not running");
        }
        return p.pid();
    }

    /** How many times the server was restarted. */
    synchronized int restarts() {
        return restarts;
    }

    /** Stops the server (its memory is gone: no persistence) and starts an empty one on the same port. */
    synchronized void restart() {
        stopProcess();
        process = RedisProcess.start(binary, port, List.of());
        restarts++;
    }

    /** Stops the server; {@link #startAgain()} brings an empty one back on the same port. */
    synchronized void stopProcess() {
        RedisProcess p = process;
        process = null;
        if (p != null) {
            p.stop();
        }
    }

    synchronized void startAgain() {
        if (process == null) {
            process = RedisProcess.start(binary, port, List.of());
            restarts++;
        }
    }

    /** {@code FLUSHALL}: every hot-tier record is forgotten. */
    void flushAll() {
        String reply = command("FLUSHALL");
        if (!reply.startsWith("+OK")) {
            throw new IllegalStateException("FLUSHALL answered " + reply);
        }
    }

    /** {@code DBSIZE}: how many keys the hot tier holds. */
    long keys() {
        String reply = command("DBSIZE");
        if (!reply.startsWith(":")) {
            throw new IllegalStateException("DBSIZE answered " + reply);
        }
        return Long.parseLong(reply.substring(1).strip());
    }

    /** Sends one inline command and reads the one-line reply. */
    private String command(String inline) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            socket.setSoTimeout(5000);
            socket.getOutputStream().write((inline + "\r\n").getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b >= 0 && b != '\n'; b = in.read()) {
                line.append((char) b);
            }
            return line.toString().strip();
        } catch (IOException e) {
            throw new UncheckedIOException("redis " + inline + " failed", e);
        }
    }

    @Override
    public synchronized void close() {
        stopProcess();
    }
}
