package dev.exactly.idempotency.redis;

import static dev.exactly.idempotency.redis.RedisStoreTestSupport.binaryResponse;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.fingerprint;
import static dev.exactly.idempotency.redis.RedisStoreTestSupport.randomKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Redis whose ACL denies {@code INFO} (as some managed services do): the store cannot read the
 * server's version at connect, so it assumes {@code SET ... NX GET} and works.
 */
class RedisRestrictedCommandsTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofSeconds(60);

    private RedisProcess redis;

    @AfterEach
    void stopRedis() {
        if (redis != null) {
            redis.stop();
        }
    }

    @Test
    void aServerThatDeniesInfoStillGetsPlainClaims(@TempDir Path workDir) {
        redis = RedisProcess.start(
                TestRedis.redisServerBinary(workDir),
                TestRedis.freePort(),
                List.of("--user", "default", "on", "nopass", "~*", "&*", "+@all", "-info"));
        RedisClient admin = RedisClient.create(RedisURI.create("127.0.0.1", redis.port()));
        try (StatefulRedisConnection<String, String> connection = admin.connect()) {
            assertThatThrownBy(() -> connection.sync().info("server"))
                    .as("the ACL denies INFO")
                    .isInstanceOf(RedisCommandExecutionException.class);
        } finally {
            admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }

        try (RedisIdempotencyStore store = RedisIdempotencyStore.create(
                "redis://127.0.0.1:" + redis.port(),
                RedisStoreConfig.custom()
                        .keyPrefix(RedisStoreTestSupport.uniquePrefix())
                        .build())) {
            ScopeKey key = randomKey();
            ClaimOutcome.Claimed claimed = (ClaimOutcome.Claimed) store.claim(key, fingerprint("a"), LEASE, RETENTION);
            assertThat(store.plainClaims()).isTrue();
            assertThat(store.claim(key, fingerprint("a"), LEASE, RETENTION))
                    .isEqualTo(new ClaimOutcome.InFlight(claimed.record()));
            assertThat(store.complete(key, claimed.owner(), RecordStatus.COMPLETED, binaryResponse()))
                    .isTrue();
            assertThat(store.claim(key, fingerprint("a"), LEASE, RETENTION)).isInstanceOf(ClaimOutcome.Finished.class);
        }
    }
}
