package dev.exactly.idempotency.redis.internal;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultEventLoopGroupProvider;
import java.util.concurrent.TimeUnit;

/**
 * The Lettuce resources of a client the store creates for itself (from a URI): its channels consolidate
 * flushes ({@link FlushConsolidation}), and a Cluster client's connections share one event loop.
 *
 * <p>One loop, because a caller that hands a command to a loop asleep in {@code epoll_wait} wakes it (an
 * {@code eventfd} write under a JDK monitor, paid on the caller's thread), and a loop with more commands to
 * carry sleeps less between them. A standalone store sends every command over one connection, so its commands
 * meet on one loop whatever the client's pool. Lettuce gives a client one loop per core (at least two), over
 * which a Cluster client spreads its connections, one per node: each loop then carries a share of the commands,
 * is found asleep more often, and the Cluster store paid for the wake-ups what the standalone store did not. On
 * one loop its commands meet as the standalone store's do. One loop carries what one connection can (hundreds of
 * thousands of commands a second); a caller that wants its Cluster's connections spread builds its own client,
 * with its own resources, and hands it to {@code RedisIdempotencyStore.cluster}. The standalone client keeps
 * Lettuce's loops: given one loop for its command and pub/sub connections, the standalone guard cost the
 * JVM 3 µs a fresh key more in alternating runs, for no gain.
 *
 * <p>Lettuce raises an {@code ioThreadPoolSize} below two to two, so the loop comes from a provider of one
 * thread. The client's shutdown hands its loop back to the provider, which stops it; resources given a provider
 * leave the provider itself to its owner, and {@link #shutdown} shuts both down.
 */
public final class StoreClientResources {
    private StoreClientResources() {}

    /**
     * New resources for a standalone client: consolidated flushes, Lettuce's event loops (its one command
     * connection keeps one of them busy). Shut them down with {@link #shutdown}.
     */
    public static ClientResources standalone() {
        return ClientResources.builder()
                .nettyCustomizer(FlushConsolidation.customizer())
                .build();
    }

    /** New resources for a Cluster client: consolidated flushes, one event loop. Shut them down with {@link #shutdown}. */
    public static ClientResources cluster() {
        return ClientResources.builder()
                .nettyCustomizer(FlushConsolidation.customizer())
                .eventLoopGroupProvider(new DefaultEventLoopGroupProvider(1))
                .build();
    }

    /**
     * Shuts down resources made here, their event loops included, waiting up to 2 s for each (the provider's
     * shutdown after the resources' own is a no-op where the resources made the provider themselves).
     */
    public static void shutdown(ClientResources resources) {
        try {
            resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        } finally {
            resources.eventLoopGroupProvider().shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }
}
