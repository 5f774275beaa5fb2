package dev.exactly.idempotency.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Commands queued for a busy event loop leave in one socket write with {@link FlushConsolidation}, and in one
 * write each without it (the control, same test Redis, same steps), with every answer the right one.
 */
class FlushConsolidationTest {
    private static final int COMMANDS = 50;

    /** Flushes that pass the consolidation handler: the writes that reach the socket. */
    private static final class FlushCounter extends ChannelOutboundHandlerAdapter {
        final AtomicInteger flushes = new AtomicInteger();

        @Override
        public void flush(ChannelHandlerContext ctx) {
            flushes.incrementAndGet();
            ctx.flush();
        }
    }

    @Test
    void commandsQueuedForABusyEventLoopLeaveInOneWrite() throws Exception {
        assertThat(socketFlushesFor(COMMANDS, true)).isEqualTo(1);
    }

    @Test
    void withoutItEachCommandIsAWriteOfItsOwn() throws Exception {
        assertThat(socketFlushesFor(COMMANDS, false)).isEqualTo(COMMANDS);
    }

    @Test
    void aLoneCommandIsNotHeldBack() throws Exception {
        assertThat(socketFlushesFor(1, true)).isEqualTo(1);
    }

    /**
     * Holds the connection's event loop on a latch, sends {@code count} {@code GET}s meanwhile (each queued as a
     * task of that loop), lets the loop go, and returns how many flushes reached the socket for them.
     */
    private static int socketFlushesFor(int count, boolean consolidated) throws Exception {
        FlushCounter counter = new FlushCounter();
        AtomicReference<Channel> channel = new AtomicReference<>();
        NettyCustomizer customizer = new NettyCustomizer() {
            @Override
            public void afterChannelInitialized(Channel initialized) {
                if (consolidated) {
                    FlushConsolidation.customizer().afterChannelInitialized(initialized);
                }
                initialized.pipeline().addFirst(counter);
                channel.set(initialized);
            }
        };
        ClientResources resources =
                ClientResources.builder().nettyCustomizer(customizer).build();
        RedisClient client = RedisClient.create(resources, RedisURI.create(TestRedis.uri()));
        try (StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8)) {
            RedisAsyncCommands<String, String> commands = connection.async();
            String prefix = "exactly:test:flush:" + UUID.randomUUID() + ":";
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                keys.add(prefix + i);
                connection.sync().set(prefix + i, "value " + i);
            }

            CountDownLatch busy = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            channel.get().eventLoop().execute(() -> {
                busy.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
            int before = counter.flushes.get();
            List<RedisFuture<String>> answers = new ArrayList<>();
            for (String key : keys) {
                answers.add(commands.get(key));
            }
            release.countDown();
            for (int i = 0; i < count; i++) {
                assertThat(answers.get(i).get(10, TimeUnit.SECONDS)).isEqualTo("value " + i);
            }
            int flushes = counter.flushes.get() - before;
            connection.sync().del(keys.toArray(String[]::new));
            return flushes;
        } finally {
            client.shutdown();
            resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }
}
