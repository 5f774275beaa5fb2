package dev.exactly.benchmarks.store;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.SetArgs;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Raw Redis through Lettuce on one shared connection with a byte-array codec, as the Redis store talks to
 * Redis: each command through the asynchronous API, awaited with a timeout (the synchronous API's proxy
 * would cost the floor work the store does not do), and concurrent callers share, and so pipeline on,
 * that connection. A fresh key is {@code SET k v NX PX 600000} then {@code SET k v XX PX 600000}; a
 * replay is {@code GET k}. Its client keeps no timer per command ({@link #TIMEOUTS}), as the store's
 * clients do not: the await's timeout is the only one.
 */
final class RedisRawBaseline implements RawBaseline {
    /** As long as the HTTP benchmark's route keeps its records: replay keys are read long after they were written. */
    static final long TTL_MILLIS = 600_000;
    private static final SetArgs NX_PX = SetArgs.Builder.nx().px(TTL_MILLIS);
    private static final SetArgs XX_PX = SetArgs.Builder.xx().px(TTL_MILLIS);
    private static final byte[] PLACEHOLDER = "processing".getBytes(StandardCharsets.US_ASCII);

    private static final long TIMEOUT_NANOS = Duration.ofSeconds(10).toNanos();
    /** The client's command timeouts: none of Lettuce's own, as in the store's clients. */
    static final TimeoutOptions TIMEOUTS = TimeoutOptions.builder().timeoutCommands(false).build();

    private final RedisClusterAsyncCommands<byte[], byte[]> commands;
    private final String keyPrefix;
    private final Runnable close;

    RedisRawBaseline(RedisClusterAsyncCommands<byte[], byte[]> commands, String keyPrefix, Runnable close) {
        this.commands = commands;
        this.keyPrefix = keyPrefix;
        this.close = close;
    }

    @Override
    public String freshOperations() {
        return "SET k v NX PX " + TTL_MILLIS + ", then SET k v XX PX " + TTL_MILLIS;
    }

    @Override
    public String replayOperation() {
        return "GET k";
    }

    @Override
    public boolean claim(String key) {
        return "OK".equals(await(commands.set(key(key), PLACEHOLDER, NX_PX)));
    }

    @Override
    public boolean finish(String key, byte[] value) {
        return "OK".equals(await(commands.set(key(key), value, XX_PX)));
    }

    @Override
    public byte @Nullable [] read(String key) {
        return await(commands.get(key(key)));
    }

    private static <T> T await(RedisFuture<T> future) {
        return LettuceFutures.awaitOrCancel(future, TIMEOUT_NANOS, TimeUnit.NANOSECONDS);
    }

    private byte[] key(String key) {
        return (keyPrefix + key).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        close.run();
    }
}
