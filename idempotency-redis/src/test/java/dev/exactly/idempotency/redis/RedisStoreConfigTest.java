package dev.exactly.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.ScopeKey;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RedisStoreConfigTest {

    @Test
    void defaults() {
        RedisStoreConfig config = RedisStoreConfig.ofDefaults();
        assertThat(config.keyPrefix()).isEqualTo("exactly:idem:");
        assertThat(config.commandTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(config.connectTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(config.changesChannel()).isEqualTo("exactly:idem:changes");
        assertThat(RedisStoreConfig.custom().build()).isEqualTo(config);
    }

    @Test
    void recordKeysWrapTheScopeHashInAHashTag() {
        ScopeKey key = new ScopeKey("ab".repeat(32));
        assertThat(RedisStoreConfig.ofDefaults().recordKey(key)).isEqualTo("exactly:idem:{" + "ab".repeat(32) + "}:r");
        assertThat(RedisStoreConfig.ofDefaults().waiterKey(key)).isEqualTo("exactly:idem:{" + "ab".repeat(32) + "}:w");
    }

    @Test
    void fromCopiesAndBuildsAnIndependentValue() {
        RedisStoreConfig base = RedisStoreConfig.custom()
                .keyPrefix("p:")
                .commandTimeout(Duration.ofMillis(300))
                .build();
        RedisStoreConfig derived = RedisStoreConfig.from(base)
                .connectTimeout(Duration.ofSeconds(1))
                .build();
        assertThat(derived).isEqualTo(new RedisStoreConfig("p:", Duration.ofMillis(300), Duration.ofSeconds(1)));
        assertThat(base.connectTimeout()).isEqualTo(Duration.ofSeconds(2));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a{b}:", "has space:", "tab\t", "caf\u00e9:"})
    void rejectsPrefixesThatWouldBreakKeysOrSlots(String prefix) {
        assertThatThrownBy(() -> RedisStoreConfig.custom().keyPrefix(prefix).build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rejectsTimeoutsOutsideTheirRange() {
        assertThatThrownBy(() ->
                        RedisStoreConfig.custom().commandTimeout(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RedisStoreConfig.custom()
                        .connectTimeout(Duration.ofMillis(-5))
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RedisStoreConfig.custom()
                        .commandTimeout(Duration.ofHours(1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
    }
}
