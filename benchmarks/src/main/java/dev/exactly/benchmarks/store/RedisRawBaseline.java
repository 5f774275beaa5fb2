package dev.exactly.benchmarks.store;

import io.lettuce.core.SetArgs;
import io.lettuce.core.api.sync.RedisStringCommands;

/**
 * {@code SET key value NX PX 30000} through a Lettuce synchronous API on one shared connection, as the
 * Redis store talks to Redis (concurrent callers share, and so pipeline on, that connection).
 */
final class RedisRawBaseline implements RawBaseline {
    static final long TTL_MILLIS = 30_000;
    private static final SetArgs NX_PX = SetArgs.Builder.nx().px(TTL_MILLIS);

    private final RedisStringCommands<String, String> commands;
    private final String keyPrefix;
    private final String value;
    private final Runnable close;

    RedisRawBaseline(RedisStringCommands<String, String> commands, String keyPrefix, String value, Runnable close) {
        this.commands = commands;
        this.keyPrefix = keyPrefix;
        this.value = value;
        this.close = close;
    }

    @Override
    public String operation() {
        return "SET key value NX PX " + TTL_MILLIS;
    }

    @Override
    public boolean insertIfAbsent(String key) {
        return "OK".equals(commands.set(keyPrefix + key, value, NX_PX));
    }

    @Override
    public void close() {
        close.run();
    }
}
