package dev.exactly.idempotency.redis;

import static dev.exactly.idempotency.redis.RedisStoreTestSupport.fingerprint;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.randomKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.TestRedis;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A store that cannot reach Redis fails closed, quickly, and recovers once Redis is back. */
class RedisUnavailableTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofSeconds(60);
    private static final RedisStoreConfig DEFAULTS = RedisStoreConfig.custom()
            .keyPrefix(RedisStoreTestSupport.uniquePrefix())
            .build();
    private static final RedisStoreConfig FAST = RedisStoreConfig.from(DEFAULTS)
            .commandTimeout(Duration.ofMillis(500))
            .connectTimeout(Duration.ofMillis(500))
            .build();

    /**
     * One real round trip first, so that the time bounds below measure timeouts, not the JVM loading
     * the client's classes.
     */
    @BeforeAll
    static void warmUp() {
        try (RedisIdempotencyStore store = RedisIdempotencyStore.create(TestRedis.uri(), DEFAULTS)) {
            assertThat(store.find(randomKey())).isEmpty();
        }
    }

    @Test
    void aClosedPortFailsEveryOperationClosedAndQuickly() {
        int closedPort = TestRedis.freePort();
        try (RedisIdempotencyStore store = RedisIdempotencyStore.create("redis://127.0.0.1:" + closedPort, FAST)) {
            ScopeKey key = randomKey();
            OwnerToken owner = OwnerToken.random();
            assertUnavailableWithin(Duration.ofSeconds(3), () -> store.claim(key, fingerprint("a"), LEASE, RETENTION));
            assertUnavailableWithin(
                    Duration.ofSeconds(3),
                    () -> store.complete(key, owner, RecordStatus.COMPLETED, StoredResponse.of(200, new byte[0])));
            assertUnavailableWithin(Duration.ofSeconds(3), () -> store.release(key, owner));
            assertUnavailableWithin(Duration.ofSeconds(3), () -> store.renew(key, owner, LEASE));
            assertUnavailableWithin(Duration.ofSeconds(3), () -> store.find(key));
            assertUnavailableWithin(Duration.ofSeconds(3), () -> store.subscribe(key));
        }
    }

    @Test
    void aClusterSeedListOfClosedPortsFailsClosedQuickly() {
        String uri = "redis-cluster://127.0.0.1:" + TestRedis.freePort() + ",127.0.0.1:" + TestRedis.freePort();
        try (RedisIdempotencyStore store = RedisIdempotencyStore.create(uri, FAST)) {
            assertUnavailableWithin(
                    Duration.ofSeconds(5), () -> store.claim(randomKey(), fingerprint("a"), LEASE, RETENTION));
        }
    }

    @Test
    void aServerThatNeverAnswersTimesOutWithinTheConfiguredBound() throws IOException {
        // A listening socket that is never accepted from: TCP connects, the Redis handshake never returns.
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                RedisIdempotencyStore store =
                        RedisIdempotencyStore.create("redis://127.0.0.1:" + silent.getLocalPort(), FAST)) {
            assertUnavailableWithin(
                    Duration.ofSeconds(5), () -> store.claim(randomKey(), fingerprint("a"), LEASE, RETENTION));
        }
    }

    @Test
    void aStoreBuiltWhileRedisIsDownWorksOnceRedisIsUp() {
        Path binary = TestRedis.redisServerOnPath();
        Assumptions.assumeTrue(binary != null, "needs redis-server on the PATH to start a server late");
        int port = TestRedis.freePort();
        try (RedisIdempotencyStore store = RedisIdempotencyStore.create("redis://127.0.0.1:" + port, DEFAULTS)) {
            ScopeKey key = randomKey();
            assertUnavailableWithin(Duration.ofSeconds(3), () -> store.find(key));
            RedisProcess server = RedisProcess.start(binary, port, List.of());
            try {
                await().atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(100))
                        .ignoreExceptionsInstanceOf(StoreUnavailableException.class)
                        .until(() -> store.find(key).isEmpty());
                assertThat(store.claim(key, fingerprint("a"), LEASE, RETENTION))
                        .isInstanceOf(ClaimOutcome.Claimed.class);
            } finally {
                store.close();
                server.stop();
                RedisClusterFixture.deleteTree(server.dir());
            }
        }
    }

    @Test
    void aClosedStoreRefusesWork() {
        RedisIdempotencyStore store = RedisIdempotencyStore.create(TestRedis.uri(), DEFAULTS);
        ScopeKey key = randomKey();
        assertThat(store.claim(key, fingerprint("a"), LEASE, RETENTION)).isInstanceOf(ClaimOutcome.Claimed.class);
        store.close();
        store.close();
        assertThatThrownBy(() -> store.find(key)).isInstanceOf(IllegalStateException.class);
    }

    private static void assertUnavailableWithin(Duration bound, ThrowingCallable call) {
        long start = System.nanoTime();
        assertThatThrownBy(call).isInstanceOf(StoreUnavailableException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(bound);
    }
}
