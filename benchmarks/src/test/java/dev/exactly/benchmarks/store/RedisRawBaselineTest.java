package dev.exactly.benchmarks.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestRedis;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The two Redis floors do what they claim: the plain one's second write overwrites whatever holds the key
 * (it is not fenced), the fenced one writes the answer only while the key still holds its claim's value.
 */
class RedisRawBaselineTest {
    private static RedisClient client;
    private static StatefulRedisConnection<byte[], byte[]> connection;
    private static final String PREFIX = "exactly:test:raw:" + UUID.randomUUID() + ":";

    @BeforeAll
    static void connect() {
        client = RedisClient.create(TestRedis.uri());
        client.setOptions(ClientOptions.builder()
                .timeoutOptions(RedisRawBaseline.TIMEOUTS)
                .build());
        connection = client.connect(ByteArrayCodec.INSTANCE);
    }

    @AfterAll
    static void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Test
    void theFencedFloorWritesOnlyWhileTheKeyHoldsItsClaim() {
        RedisRawBaseline fenced = RedisRawBaseline.fenced(connection.async(), PREFIX + "fenced:", () -> {});
        byte[] answer = "{\"ok\":true}".getBytes(StandardCharsets.UTF_8);

        assertThat(fenced.claim("a")).isTrue();
        assertThat(fenced.claim("a")).as("taken").isFalse();
        assertThat(fenced.finish("a", answer)).isTrue();
        assertThat(fenced.read("a")).isEqualTo(answer);

        assertThat(fenced.claim("b")).isTrue();
        // another owner took the key over meanwhile: the late answer must not overwrite its record
        byte[] successor = "successor".getBytes(StandardCharsets.UTF_8);
        connection.sync().set((PREFIX + "fenced:b").getBytes(StandardCharsets.UTF_8), successor);
        assertThat(fenced.finish("b", answer)).isFalse();
        assertThat(fenced.read("b")).isEqualTo(successor);
        assertThat(fenced.freshOperations()).contains("EVALSHA");
    }

    @Test
    void thePlainFloorIsNotFenced() {
        RedisRawBaseline plain = new RedisRawBaseline(connection.async(), PREFIX + "plain:", () -> {});
        byte[] answer = "{\"ok\":true}".getBytes(StandardCharsets.UTF_8);

        assertThat(plain.claim("b")).isTrue();
        connection
                .sync()
                .set(
                        (PREFIX + "plain:b").getBytes(StandardCharsets.UTF_8),
                        "successor".getBytes(StandardCharsets.UTF_8));
        assertThat(plain.finish("b", answer))
                .as("SET XX overwrites the successor's record")
                .isTrue();
        assertThat(plain.read("b")).isEqualTo(answer);
    }
}
