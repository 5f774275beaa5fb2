package dev.exactly.idempotency.redis.internal;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The store's Lua scripts, shipped as resources next to the store class and read once. A script runs
 * with {@code EVALSHA}; a server that does not know it (a restart, {@code SCRIPT FLUSH}, a Cluster node
 * that never ran it) answers {@code NOSCRIPT}, and the script is sent once with {@code EVAL}, which
 * also caches it there.
 *
 * <p>The command is built here rather than by Lettuce's {@code evalsha}: the digest goes out as the bytes it
 * was encoded to once, and every argument as the byte array it already is ({@code CommandArgs.add(byte[])}),
 * with only the first key through the codec, where a Cluster connection finds the slot to route to.
 */
@SuppressWarnings("ImmutableEnumChecker") // the script and its digest, filled once here, are only ever read
public enum LuaScript {
    /** See {@code claim.lua}. */
    CLAIM("claim.lua", ScriptOutputType.MULTI),
    /** See {@code complete.lua}. */
    COMPLETE("complete.lua", ScriptOutputType.INTEGER),
    /** See {@code finish.lua}. */
    FINISH("finish.lua", ScriptOutputType.INTEGER),
    /** See {@code finish-if-equal.lua}. */
    FINISH_IF_EQUAL("finish-if-equal.lua", ScriptOutputType.INTEGER),
    /** See {@code release.lua}. */
    RELEASE("release.lua", ScriptOutputType.INTEGER),
    /** See {@code renew.lua}. */
    RENEW("renew.lua", ScriptOutputType.INTEGER),
    /** See {@code touch.lua}. */
    TOUCH("touch.lua", ScriptOutputType.VALUE);

    private static final String RESOURCE_DIR = "/dev/exactly/idempotency/redis/";

    private final String fileName;
    private final byte[] source;
    private final String sha1;
    private final byte[] sha1Bytes;
    private final ScriptOutputType outputType;

    LuaScript(String fileName, ScriptOutputType outputType) {
        this.fileName = fileName;
        this.source = read(RESOURCE_DIR + fileName);
        this.sha1 = sha1Hex(source);
        this.sha1Bytes = sha1.getBytes(StandardCharsets.US_ASCII);
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
     * {@code NOSCRIPT}, each answer awaited within {@code deadlines}. Redis errors propagate as Lettuce
     * exceptions.
     */
    @SuppressWarnings("TypeParameterUnusedInFormals") // T is what the script's output type decodes, known to the caller
    public <T> T run(
            RedisClusterAsyncCommands<byte[], byte[]> commands,
            CommandDeadlines deadlines,
            byte[] key,
            byte[]... args) {
        return run(commands, deadlines, new byte[][] {key}, args);
    }

    /** As {@link #run(RedisClusterAsyncCommands, CommandDeadlines, byte[], byte[]...)} with several keys, all in one slot. */
    @SuppressWarnings("TypeParameterUnusedInFormals") // T is what the script's output type decodes, known to the caller
    public <T> T run(
            RedisClusterAsyncCommands<byte[], byte[]> commands,
            CommandDeadlines deadlines,
            byte[][] keys,
            byte[]... args) {
        try {
            return deadlines.await(
                    commands.<T>dispatch(CommandType.EVALSHA, this.<T>output(), arguments(sha1Bytes, keys, args)));
        } catch (RedisNoScriptException notCached) {
            return deadlines.await(
                    commands.<T>dispatch(CommandType.EVAL, this.<T>output(), arguments(source, keys, args)));
        }
    }

    /** {@code script numkeys key... arg...}: the first key through the codec (Cluster routes on it), the rest as bytes. */
    private static CommandArgs<byte[], byte[]> arguments(byte[] script, byte[][] keys, byte[][] args) {
        CommandArgs<byte[], byte[]> out =
                new CommandArgs<>(ByteArrayCodec.INSTANCE).add(script).add(keys.length);
        out.addKey(keys[0]);
        for (int i = 1; i < keys.length; i++) {
            out.add(keys[i]);
        }
        for (byte[] arg : args) {
            out.add(arg);
        }
        return out;
    }

    /** What Lettuce's {@code evalsha} would decode the answer with for this script's output type. */
    @SuppressWarnings("unchecked")
    private <T> CommandOutput<byte[], byte[], T> output() {
        return (CommandOutput<byte[], byte[], T>)
                switch (outputType) {
                    case INTEGER -> new IntegerOutput<>(ByteArrayCodec.INSTANCE);
                    case MULTI -> new NestedMultiOutput<>(ByteArrayCodec.INSTANCE);
                    case VALUE -> new ValueOutput<>(ByteArrayCodec.INSTANCE);
                    default -> throw new IllegalStateException("no output for " + outputType);
                };
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
