package dev.exactly.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import org.junit.jupiter.api.Test;

/** How the store tells a Redis that accepts {@code SET ... NX GET} (7.0 and later) from an older one. */
class RedisVersionTest {
    @Test
    void readsTheMajorVersionFromInfoServer() {
        assertThat(RedisIdempotencyStore.supportsSetNxGet("# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n"))
                .isTrue();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("# Server\r\nredis_version:8.2.1\r\n")).isTrue();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("# Server\r\nredis_version:6.2.14\r\n")).isFalse();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("# Server\nredis_version:5.0.7\n")).isFalse();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("# Server\r\nredis_version:unstable\r\n"))
                .as("unknown: tried, and a refusal switches to the script").isTrue();
        assertThat(RedisIdempotencyStore.supportsSetNxGet("")).isTrue();
    }

    @Test
    void aSyntaxErrorIsTheRefusalOfAnOlderRedis() {
        assertThat(RedisIdempotencyStore.setNxGetRefused(new RedisCommandExecutionException("ERR syntax error"))).isTrue();
        assertThat(RedisIdempotencyStore.setNxGetRefused(new RedisCommandExecutionException("OOM command not allowed")))
                .isFalse();
        assertThat(RedisIdempotencyStore.setNxGetRefused(new RedisCommandExecutionException((String) null))).isFalse();
    }
}
