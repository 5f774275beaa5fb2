package dev.exactly.idempotency.redis.internal;

import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;

/**
 * Lets the commands that callers hand a connection while its event loop is busy leave in one socket write.
 *
 * <p>Lettuce writes and flushes every command on its own: a caller off the event loop queues a task that
 * writes the command and flushes the channel, so commands of concurrent callers on one shared connection
 * cost one {@code write} system call each, however many are waiting. With Netty's
 * {@link FlushConsolidationHandler} at the head of each channel's pipeline, a flush outside a read is
 * deferred to a task the event loop runs after the tasks already queued: the commands written meanwhile
 * leave together (and Redis reads them together), and a lone command leaves in the same turn of the event
 * loop, so no command waits for another. A flush during a read waits for the end of the read, as that
 * handler does, and {@value #EXPLICIT_FLUSH_AFTER} deferred flushes are written at once. Nothing changes
 * what is sent or the order in which it is sent.
 */
public final class FlushConsolidation implements NettyCustomizer {
    /** Deferred flushes after which the handler writes without waiting for its task. */
    static final int EXPLICIT_FLUSH_AFTER = 256;

    private static final FlushConsolidation INSTANCE = new FlushConsolidation();

    private FlushConsolidation() {}

    /** The customizer: stateless, one handler of its own per channel. */
    public static NettyCustomizer customizer() {
        return INSTANCE;
    }

    @Override
    public void afterChannelInitialized(Channel channel) {
        channel.pipeline().addFirst(handler());
    }

    /** A new handler for one channel (it keeps the channel's count of deferred flushes). */
    static FlushConsolidationHandler handler() {
        return new FlushConsolidationHandler(EXPLICIT_FLUSH_AFTER, true);
    }
}
