package dev.exactly.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The Redis server tests use: {@code 127.0.0.1:6379} (override with {@code EXACTLY_TEST_REDIS_PORT}),
 * or, when absent and {@code CI} is not {@code true}, a {@code redis-server} from the PATH or the
 * embedded-redis artifact on a free loopback port.
 */
public final class TestRedis {
    private static final String EMBEDDED_BINARY = "/redis-server-6.2.6-v5-linux-amd64";
    private static @Nullable Integer port;

    private TestRedis() {}

    public static String host() {
        return "127.0.0.1";
    }

    /** The port of the server (found or started once per JVM). */
    public static synchronized int port() {
        if (port != null) {
            return port;
        }
        int wanted = Integer.parseInt(System.getenv().getOrDefault("EXACTLY_TEST_REDIS_PORT", "6379"));
        try {
            ping(wanted);
            port = wanted;
        } catch (IOException e) {
            Ci.requireOrFallback("Redis", host() + ":" + wanted, e);
            port = startStandalone();
        }
        return port;
    }

    /** {@code redis://127.0.0.1:PORT}. */
    public static String uri() {
        return "redis://" + host() + ":" + port();
    }

    /** Sends PING over a raw socket; throws unless the answer is PONG. */
    public static void ping(int port) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host(), port), 2000);
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] buf = new byte[7];
            int n = in.readNBytes(buf, 0, 7);
            String reply = new String(buf, 0, n, StandardCharsets.US_ASCII);
            if (!reply.startsWith("+PONG")) {
                throw new IOException("unexpected reply to PING: " + reply.strip());
            }
        }
    }

    /** Whether {@code redis-server} is on the PATH. */
    public static @Nullable Path redisServerOnPath() {
        return onPath("redis-server");
    }

    /**
     * A server with compare-and-set ({@code SET ... IFEQ}: Valkey 8.1 and later) for the tests of that path:
     * {@code EXACTLY_VALKEY_SERVER} if set, else {@code valkey-server} from the PATH; null when there is none.
     * CI provides one ({@code .ci/run} builds it when the machine has none).
     */
    public static @Nullable Path valkeyServerBinary() {
        String configured = System.getenv("EXACTLY_VALKEY_SERVER");
        if (configured != null && !configured.isBlank()) {
            Path binary = Path.of(configured);
            if (!Files.isExecutable(binary)) {
                throw new IllegalStateException("EXACTLY_VALKEY_SERVER=" + configured + " is not an executable file");
            }
            return binary;
        }
        return onPath("valkey-server");
    }

    /** The executable {@code program} in the first directory of the PATH that has one, or null. */
    public static @Nullable Path onPath(String program) {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(java.io.File.pathSeparator, -1)) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /**
     * A {@code redis-server} binary for a server of a test's own (to stall, restart or flush): the one on
     * the PATH, or else the Linux x86-64 build the embedded-redis artifact carries, copied into
     * {@code workDir}.
     */
    public static Path redisServerBinary(Path workDir) {
        Path onPath = redisServerOnPath();
        if (onPath != null) {
            return onPath;
        }
        try (InputStream in = TestRedis.class.getResourceAsStream(EMBEDDED_BINARY)) {
            if (in == null
                    || !System.getProperty("os.name")
                            .toLowerCase(java.util.Locale.ROOT)
                            .contains("linux")) {
                throw new IllegalStateException("no redis-server on the PATH and no embedded build for this platform");
            }
            Path target = workDir.resolve("redis-server");
            Files.copy(in, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            if (!target.toFile().setExecutable(true)) {
                throw new IllegalStateException("cannot make " + target + " executable");
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A free loopback TCP port. */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int startStandalone() {
        int free = freePort();
        Path binary = redisServerOnPath();
        if (binary != null) {
            RedisProcess process = RedisProcess.start(binary, free, List.of());
            Runtime.getRuntime().addShutdownHook(new Thread(process::stop));
            return free;
        }
        try {
            redis.embedded.RedisServer server = redis.embedded.RedisServer.newRedisServer()
                    .port(free)
                    .setting("bind 127.0.0.1")
                    .setting("save \"\"")
                    .setting("appendonly no")
                    .build();
            server.start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    server.stop();
                } catch (IOException ignored) {
                    // the JVM is going away
                }
            }));
            return free;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start embedded Redis", e);
        }
    }

    /** Extra arguments helper for {@link RedisProcess}. */
    static List<String> baseArgs(int port, Path dir) {
        List<String> args = new ArrayList<>();
        args.add("--port");
        args.add(Integer.toString(port));
        args.add("--bind");
        args.add("127.0.0.1");
        args.add("--save");
        args.add("");
        args.add("--appendonly");
        args.add("no");
        args.add("--dir");
        args.add(dir.toString());
        return args;
    }
}
