package dev.exactly.idempotency.redis;

import dev.exactly.testing.Ci;
import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.TestRedis;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * One Valkey server (8.1 or later: {@code SET ... IFEQ}) for the tests of the store's compare-and-set
 * completion, started on a free loopback port the first time a test asks and stopped by its PID when the
 * JVM ends. Under {@code CI=true} a missing binary fails the test ({@code .ci/run} provides one); elsewhere
 * the test is skipped with the reason.
 */
final class TestValkey {
    private static RedisProcess server;

    private TestValkey() {}

    /** The Valkey binary; fails under CI when there is none, and skips the caller elsewhere. */
    static Path binary() {
        Path binary = TestRedis.valkeyServerBinary();
        if (binary == null) {
            String missing = "no valkey-server on the PATH and EXACTLY_VALKEY_SERVER not set";
            if (Ci.strict()) {
                throw new IllegalStateException(missing + ": CI needs one (see .ci/run)");
            }
            Assumptions.abort(missing);
        }
        return binary;
    }

    static synchronized int port() {
        if (server == null) {
            RedisProcess started = RedisProcess.start(binary(), TestRedis.freePort(), List.of());
            Runtime.getRuntime().addShutdownHook(new Thread(started::stop));
            server = started;
        }
        return server.port();
    }

    static String uri() {
        return "redis://" + TestRedis.host() + ":" + port();
    }
}
