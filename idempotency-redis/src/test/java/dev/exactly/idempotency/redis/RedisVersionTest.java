package dev.exactly.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import org.junit.jupiter.api.Test;

/** How the store tells a Redis that accepts {@code SET ... NX GET} (7.0 and later) from an older one. */
class RedisVersionTest {
    @Test
    void readsTheMajorVersionFromInfoServer() {
        assertThat(RedisIdempotencyStore.supportsSetNxGet(
                        "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n"))
                .isTrue();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("# Server\r\nredis_version:8.2.1\r\n"))
                .isTrue();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("# Server\r\nredis_version:6.2.14\r\n"))
                .isFalse();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("# Server\nredis_version:5.0.7\n"))
                .isFalse();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("# Server\r\nredis_version:unstable\r\n"))
                .as("unknown: tried, and a refusal switches to the script")
                .isTrue();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("")).isTrue();
    }

    @Test
    void compareAndSetIsValkeyFromEightOneAndRedisFromEightFour() {
        assertThat(RedisIdempotencyStore.supportsSetIfEqual(
                        "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.1.1\r\n"))
                .isTrue();
        assertThat(RedisIdempotencyStore.supportsSetIfEqual(
                        "# Server\r\nredis_version:7.2.4\r\nvalkey_version:9.0.0\r\n"))
                .isTrue();
        assertThat(RedisIdempotencyStore.supportsSetIfEqual(
                        "# Server\r\nredis_version:7.2.4\r\nvalkey_version:8.0.2\r\n"))
                .as("Valkey 8.0 reports the Redis version it is compatible with; it has no IFEQ")
                .isFalse();
        assertThat(RedisIdempotencyStore.supportsSetIfEqual("# Server\r\nredis_version:8.4.0\r\n"))
                .isTrue();
        assertThat(RedisIdempotencyStore.supportsSetIfEqual("# Server\r\nredis_version:10.0.1\r\n"))
                .isTrue();
        assertThat(RedisIdempotencyStore.supportsSetIfEqual("# Server\r\nredis_version:8.2.1\r\n"))
                .isFalse();
        assertThat(RedisIdempotencyStore.supportsSetIfEqual("# Server\r\nredis_version:7.0.15\r\n"))
                .isFalse();
        assertThat(RedisIdempotencyStore.supportsSetIfEqual("# Server\nredis_version:unstable\n"))
                .as("unknown: the script, which every server runs")
                .isFalse();
        assertThat(RedisIdempotencyStore.supportsSetIfEqual("")).isFalse();
    }

    @Test
    void aSyntaxErrorIsTheRefusalOfAnOlderRedis() {
        assertThat(RedisIdempotencyStore.syntaxRefused(new RedisCommandExecutionException("ERR syntax error")))
                .isTrue();
        assertThat(RedisIdempotencyStore.syntaxRefused(new RedisCommandExecutionException("OOM command not allowed")))
                .isFalse();
        assertThat(RedisIdempotencyStore.syntaxRefused(new RedisCommandExecutionException((String) null)))
                .isFalse();
    }
}
