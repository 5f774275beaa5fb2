package dev.exactly.idempotency.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The store's bound on a command's wait, on the test Redis: a blocking pop stands for a server that does not answer. */
class CommandDeadlinesTest {
    private static final Duration TIMEOUT = Duration.ofMillis(300);

    private static RedisClient client;
    private static StatefulRedisConnection<byte[], byte[]> connection;
    private static RedisAsyncCommands<byte[], byte[]> commands;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(RedisURI.create(TestRedis.uri()));
        connection = client.connect(ByteArrayCodec.INSTANCE);
        commands = connection.async();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        client.shutdown();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] freshKey() {
        return bytes("exactly:test:deadlines:" + UUID.randomUUID());
    }

    /** A command Redis answers only after {@code seconds}: a pop from a list nobody pushes to (on its own connection). */
    private static RedisFuture<?> unanswered(StatefulRedisConnection<byte[], byte[]> own, long seconds) {
        return own.async().blpop(seconds, freshKey());
    }

    @Test
    void answersComeBackAsTheyAre() {
        try (CommandDeadlines deadlines = new CommandDeadlines(TIMEOUT, "test-deadlines")) {
            byte[] key = freshKey();
            assertThat(deadlines.await(commands.set(key, bytes("v")))).isEqualTo("OK");
            assertThat(deadlines.await(commands.get(key))).isEqualTo(bytes("v"));
            assertThat(deadlines.await(commands.get(freshKey()))).isNull();
            deadlines.await(commands.del(key));
        }
    }

    @Test
    void redisErrorsAreThrownAsLettuceThrowsThem() {
        try (CommandDeadlines deadlines = new CommandDeadlines(TIMEOUT, "test-deadlines")) {
            byte[] key = freshKey();
            deadlines.await(commands.set(key, bytes("not a number")));
            assertThatThrownBy(() -> deadlines.await(commands.incr(key)))
                    .isInstanceOf(RedisCommandExecutionException.class)
                    .hasMessageContaining("not an integer");
            deadlines.await(commands.del(key));
        }
    }

    @Test
    void aCommandWithoutAnswerIsCancelledAfterTheTimeoutAndOneSweep() {
        try (CommandDeadlines deadlines = new CommandDeadlines(TIMEOUT, "test-deadlines");
                StatefulRedisConnection<byte[], byte[]> own = client.connect(ByteArrayCodec.INSTANCE)) {
            RedisFuture<?> blocked = unanswered(own, 10);
            long start = System.nanoTime();
            assertThatThrownBy(() -> deadlines.await(blocked)).isInstanceOf(RedisCommandTimeoutException.class);
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            assertThat(waited)
                    .isGreaterThanOrEqualTo(TIMEOUT.minusMillis(1))
                    .isLessThan(TIMEOUT.plusSeconds(1)); // the timeout, one sweep, and a loaded machine's scheduling
            assertThat(blocked.isCancelled())
                    .as("the command itself is cancelled, as awaitOrCancel does")
                    .isTrue();
        }
    }

    @Test
    void aSlowAnswerWithinTheTimeoutIsNotCancelled() {
        try (CommandDeadlines deadlines = new CommandDeadlines(Duration.ofSeconds(10), "test-deadlines");
                StatefulRedisConnection<byte[], byte[]> own = client.connect(ByteArrayCodec.INSTANCE)) {
            // BLPOP with a 1 s timeout answers nil after a second: many sweeps, none of which may cancel it
            assertThat(deadlines.await(unanswered(own, 1))).isNull();
        }
    }

    @Test
    void anInterruptCancelsTheCommandAndKeepsTheInterruptStatus() throws Exception {
        try (CommandDeadlines deadlines = new CommandDeadlines(Duration.ofSeconds(30), "test-deadlines");
                StatefulRedisConnection<byte[], byte[]> own = client.connect(ByteArrayCodec.INSTANCE)) {
            RedisFuture<?> blocked = unanswered(own, 30);
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicBoolean interruptedAfter = new AtomicBoolean();
            CountDownLatch waiting = new CountDownLatch(1);
            Thread waiter = Thread.ofVirtual().start(() -> {
                waiting.countDown();
                try {
                    deadlines.await(blocked);
                } catch (RuntimeException e) {
                    thrown.set(e);
                }
                interruptedAfter.set(Thread.currentThread().isInterrupted());
            });
            waiting.await();
            waiter.interrupt();
            waiter.join(Duration.ofSeconds(10));
            assertThat(waiter.isAlive()).isFalse();
            assertThat(thrown.get()).isInstanceOf(RedisCommandInterruptedException.class);
            assertThat(interruptedAfter).isTrue();
            assertThat(blocked.isCancelled()).isTrue();
        }
    }

    @Test
    void afterCloseWaitsAreStillBounded() {
        CommandDeadlines deadlines = new CommandDeadlines(TIMEOUT, "test-deadlines");
        deadlines.close();
        deadlines.close();
        try (StatefulRedisConnection<byte[], byte[]> own = client.connect(ByteArrayCodec.INSTANCE)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> deadlines.await(unanswered(own, 10)))
                    .isInstanceOf(RedisCommandTimeoutException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.plusSeconds(1));
        }
    }

    @Test
    void aWaitThatBeganBeforeTheCloseIsStillCancelledAtItsDeadline() throws Exception {
        CommandDeadlines deadlines = new CommandDeadlines(TIMEOUT, "test-deadlines");
        try (StatefulRedisConnection<byte[], byte[]> own = client.connect(ByteArrayCodec.INSTANCE)) {
            RedisFuture<?> blocked = unanswered(own, 10);
            CompletableFuture<Throwable> outcome = CompletableFuture.supplyAsync(() -> {
                try {
                    deadlines.await(blocked);
                    return null;
                } catch (RuntimeException e) {
                    return e;
                }
            });
            // close once the wait is under way: the sweeping thread stays until that wait is over
            await().atMost(Duration.ofSeconds(5)).until(() -> deadlines.waitingCommands() == 1);
            deadlines.close();
            assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(RedisCommandTimeoutException.class);
            assertThat(deadlines.waitingCommands()).isZero();
        }
    }

    @Test
    void theSweepingThreadStartsWithTheFirstWaitAndEndsAtClose() {
        String name = "test-deadlines-" + UUID.randomUUID();
        CommandDeadlines deadlines = new CommandDeadlines(TIMEOUT, name);
        assertThat(thread(name)).as("nothing waited for yet").isNull();
        deadlines.await(commands.get(freshKey()));
        Thread sweeper = thread(name);
        assertThat(sweeper).isNotNull();
        assertThat(sweeper.isDaemon()).isTrue();
        deadlines.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> !sweeper.isAlive());
    }

    private static Thread thread(String name) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals(name))
                .findFirst()
                .orElse(null);
    }

    @Test
    void aTimeoutMustBePositive() {
        assertThatThrownBy(() -> new CommandDeadlines(Duration.ZERO, "test-deadlines"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void sweepsAnEighthOfTheTimeoutAtMostFiftyMilliseconds() {
        try (CommandDeadlines shortOne = new CommandDeadlines(Duration.ofMillis(80), "test-deadlines");
                CommandDeadlines longOne = new CommandDeadlines(Duration.ofSeconds(2), "test-deadlines")) {
            assertThat(shortOne.sweepNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(10));
            assertThat(longOne.sweepNanos())
                    .isEqualTo(TimeUnit.MILLISECONDS.toNanos(CommandDeadlines.MAX_SWEEP_MILLIS));
        }
    }
}
