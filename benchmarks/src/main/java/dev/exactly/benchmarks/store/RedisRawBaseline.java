package dev.exactly.benchmarks.store;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * Raw Redis through Lettuce on one shared connection with a byte-array codec, as the Redis store talks to
 * Redis: each command through the asynchronous API (the synchronous API's proxy would cost the floor work
 * the store does not do), its answer awaited without any timeout, the least a wait can cost (the store
 * bounds every wait, at a cost of its own), and concurrent callers share, and so pipeline on, that
 * connection. A fresh key is {@code SET k v NX PX 3600000} then {@code SET k v XX PX 3600000}; a
 * replay is {@code GET k}. Its client keeps no timer per command ({@link #TIMEOUTS}), as the store's
 * clients do not.
 *
 * <p>The {@linkplain #fenced fenced} floor claims the same way and then writes the answer with the least
 * script that writes it only while the key still holds the claim's value ({@link #COMPARE_AND_SET}): what
 * any completion that a stale owner cannot overwrite costs on a Redis without a compare-and-set command
 * (one arrived in 8.4, {@code SET ... IFEQ}). The plain floor's {@code SET XX} is not fenced: a stale
 * owner's late answer would overwrite the record of the owner that took over.
 */
final class RedisRawBaseline implements RawBaseline {
    /** {@link RawBaseline#KEPT}, as the {@code PX} of its keys. */
    static final long TTL_MILLIS = KEPT.toMillis();

    private static final SetArgs NX_PX = SetArgs.Builder.nx().px(TTL_MILLIS);
    private static final SetArgs XX_PX = SetArgs.Builder.xx().px(TTL_MILLIS);
    private static final byte[] PLACEHOLDER = "processing".getBytes(StandardCharsets.US_ASCII);
    /** A compare-and-set: the answer is written only while the key holds the claim's value. */
    static final String COMPARE_AND_SET = "if redis.call('GET', KEYS[1]) == ARGV[1] then "
            + "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0";
    /** The fenced floor's claim value: as long as the store's owner token, with a prefix. */
    static final byte[] FENCE = "processing:aaaaaaaaaaaaaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII);

    static final byte[] TTL = Long.toString(TTL_MILLIS).getBytes(StandardCharsets.US_ASCII);

    /** The client's command timeouts: none of Lettuce's own, as in the store's clients. */
    static final TimeoutOptions TIMEOUTS =
            TimeoutOptions.builder().timeoutCommands(false).build();

    private final RedisClusterAsyncCommands<byte[], byte[]> commands;
    private final String keyPrefix;
    private final Runnable close;
    /** The compare-and-set script's SHA when fenced, else null. */
    private final @Nullable String compareAndSet;

    RedisRawBaseline(RedisClusterAsyncCommands<byte[], byte[]> commands, String keyPrefix, Runnable close) {
        this(commands, keyPrefix, close, null);
    }

    private RedisRawBaseline(
            RedisClusterAsyncCommands<byte[], byte[]> commands,
            String keyPrefix,
            Runnable close,
            @Nullable String compareAndSet) {
        this.commands = commands;
        this.keyPrefix = keyPrefix;
        this.close = close;
        this.compareAndSet = compareAndSet;
    }

    /** The fenced floor on {@code commands} (a standalone server's: the script is loaded on it). */
    static RedisRawBaseline fenced(
            RedisClusterAsyncCommands<byte[], byte[]> commands, String keyPrefix, Runnable close) {
        String sha = await(commands.scriptLoad(COMPARE_AND_SET.getBytes(StandardCharsets.UTF_8)));
        return new RedisRawBaseline(commands, keyPrefix, close, sha);
    }

    @Override
    public String freshOperations() {
        return "SET k v NX PX " + TTL_MILLIS + ", then "
                + (compareAndSet == null
                        ? "SET k v XX PX " + TTL_MILLIS
                        : "EVALSHA of a compare-and-set (GET, SET PX)");
    }

    @Override
    public String replayOperation() {
        return "GET k";
    }

    @Override
    public boolean claim(String key) {
        return "OK".equals(await(commands.set(key(key), compareAndSet == null ? PLACEHOLDER : FENCE, NX_PX)));
    }

    @Override
    public boolean finish(String key, byte[] value) {
        if (compareAndSet == null) {
            return "OK".equals(await(commands.set(key(key), value, XX_PX)));
        }
        Long written = await(
                commands.evalsha(compareAndSet, ScriptOutputType.INTEGER, new byte[][] {key(key)}, FENCE, value, TTL));
        return written != null && written == 1L;
    }

    @Override
    public byte @Nullable [] read(String key) {
        return await(commands.get(key(key)));
    }

    private static <T> T await(RedisFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for Redis", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Redis answered with an error", e.getCause());
        }
    }

    private byte[] key(String key) {
        return (keyPrefix + key).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        close.run();
    }
}
