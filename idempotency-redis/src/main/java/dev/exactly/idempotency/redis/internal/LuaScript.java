package dev.exactly.idempotency.redis.internal;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * The store's Lua scripts, shipped as resources next to the store class and read once. A script runs
 * with {@code EVALSHA}; a server that does not know it (a restart, {@code SCRIPT FLUSH}, a Cluster node
 * that never ran it) answers {@code NOSCRIPT}, and the script is sent once with {@code EVAL}, which
 * also caches it there.
 */
public enum LuaScript {
    /** See {@code claim.lua}. */
    CLAIM("claim.lua", ScriptOutputType.MULTI),
    /** See {@code complete.lua}. */
    COMPLETE("complete.lua", ScriptOutputType.INTEGER),
    /** See {@code release.lua}. */
    RELEASE("release.lua", ScriptOutputType.INTEGER),
    /** See {@code renew.lua}. */
    RENEW("renew.lua", ScriptOutputType.INTEGER);

    private static final String RESOURCE_DIR = "/dev/exactly/idempotency/redis/";

    private final String fileName;
    private final byte[] source;
    private final String sha1;
    private final ScriptOutputType outputType;

    LuaScript(String fileName, ScriptOutputType outputType) {
        this.fileName = fileName;
        this.source = read(RESOURCE_DIR + fileName);
        this.sha1 = sha1Hex(source);
        this.outputType = outputType;
    }

    /** The resource file name. */
    public String fileName() {
        return fileName;
    }

    /** The SHA-1 digest Redis caches the script under. */
    public String sha1() {
        return sha1;
    }

    /**
     * Runs the script on the node that owns {@code key}'s slot: {@code EVALSHA}, then {@code EVAL} on
     * {@code NOSCRIPT}, each answer awaited at most {@code timeoutNanos}. Redis errors propagate as
     * Lettuce exceptions.
     */
    public <T> T run(RedisClusterAsyncCommands<byte[], byte[]> commands, long timeoutNanos, byte[] key,
            byte[]... args) {
        return run(commands, timeoutNanos, new byte[][] {key}, args);
    }

    /** As {@link #run(RedisClusterAsyncCommands, long, byte[], byte[]...)} with several keys, all in one slot. */
    public <T> T run(RedisClusterAsyncCommands<byte[], byte[]> commands, long timeoutNanos, byte[][] keys,
            byte[]... args) {
        try {
            return LettuceFutures.awaitOrCancel(commands.<T>evalsha(sha1, outputType, keys, args),
                    timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (RedisNoScriptException notCached) {
            return LettuceFutures.awaitOrCancel(commands.<T>eval(source, outputType, keys, args),
                    timeoutNanos, TimeUnit.NANOSECONDS);
        }
    }

    private static byte[] read(String resource) {
        try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + resource);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("could not read script resource " + resource, e);
        }
    }

    private static String sha1Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK ships SHA-1", e);
        }
    }
}
