package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyKeyReusedException;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.RequestInFlightException;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.spring.IdempotencyTemplate;
import dev.exactly.testing.TestRedis;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

/**
 * The typed API for work that is not an HTTP request, in an application without a web server: one run per
 * key, the stored result read back into its type through the application's Jackson mapper, and the replay,
 * mismatch and in-flight rules of the routes; on the in-memory store and on Redis.
 */
class IdempotencyTemplateTest {
    /** A thread per task: the common pool may have a single worker, which the held call would block. */
    private static final java.util.concurrent.Executor THREADS =
            java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();

    /** What a message listener books, and returns. */
    record Receipt(String bookingId, long amountMinor) {}

    record Payment(String id, long amountMinor) {}

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class));

    @Test
    void aNonWebApplicationGetsTheTemplateOnTheApplicationsMapperAndNoFilter() {
        runner.withBean(
                        JsonMapper.class,
                        () -> JsonMapper.builder()
                                .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                                .build())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(IdempotencyFilter.class);
                    IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
                    Receipt receipt =
                            template.execute("payment-events", "evt-1", Receipt.class, () -> new Receipt("bk_1", 1500));
                    assertThat(receipt).isEqualTo(new Receipt("bk_1", 1500));
                    StoredResponse stored = context.getBean(IdempotencyEngine.class)
                            .find(new Scope(
                                            IdempotencyTemplate.DEFAULT_TENANT,
                                            "EXECUTE",
                                            "payment-events",
                                            new IdempotencyKey("evt-1"))
                                    .toScopeKey())
                            .orElseThrow()
                            .response();
                    assertThat(new String(stored.body(), StandardCharsets.UTF_8))
                            .as("written by the application's mapper")
                            .isEqualTo("{\"booking_id\":\"bk_1\",\"amount_minor\":1500}");
                });
    }

    @Test
    void onTheMemoryStore() {
        runner.run(context -> rules(context.getBean(IdempotencyTemplate.class)));
    }

    @Test
    void onRedis() {
        runner.withPropertyValues(
                        "exactly.idempotency.store=redis",
                        "exactly.idempotency.redis.uri=" + TestRedis.uri(),
                        "exactly.idempotency.redis.key-prefix=template-test:" + UUID.randomUUID() + ":")
                .run(context -> rules(context.getBean(IdempotencyTemplate.class)));
    }

    private static void rules(IdempotencyTemplate template) throws Exception {
        String key = "evt-" + UUID.randomUUID();
        AtomicInteger runs = new AtomicInteger();
        Payment payment = new Payment(key, 1500);

        // once, then the stored result, read back into its type
        Receipt first = template.execute(
                "payments", key, payment, Receipt.class, () -> new Receipt("bk_" + runs.incrementAndGet(), 1500));
        Receipt again = template.execute(
                "payments", key, payment, Receipt.class, () -> new Receipt("bk_" + runs.incrementAndGet(), 1500));
        assertThat(again).isEqualTo(first).isEqualTo(new Receipt("bk_1", 1500));
        assertThat(runs).hasValue(1);

        // the same key for another input is a mismatch; another scope or tenant is another key
        assertThatThrownBy(() -> template.execute(
                        "payments",
                        key,
                        new Payment(key, 9999),
                        Receipt.class,
                        () -> new Receipt("bk_" + runs.incrementAndGet(), 9999)))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(template.forTenant("globex")
                        .execute(
                                "payments",
                                key,
                                payment,
                                Receipt.class,
                                () -> new Receipt("bk_" + runs.incrementAndGet(), 1500)))
                .isEqualTo(new Receipt("bk_2", 1500));
        assertThat(runs).hasValue(2);

        // work that throws releases its key: the next call runs it
        String failing = "evt-" + UUID.randomUUID();
        assertThatThrownBy(() -> template.execute("payments", failing, Receipt.class, () -> {
                    runs.incrementAndGet();
                    throw new IllegalStateException("ledger down before booking");
                }))
                .hasMessage("ledger down before booking");
        assertThat(template.execute(
                        "payments", failing, Receipt.class, () -> new Receipt("bk_" + runs.incrementAndGet(), 1)))
                .isEqualTo(new Receipt("bk_4", 1));

        // in flight: refused at once, or waited for under a wait policy
        String slow = "evt-" + UUID.randomUUID();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Receipt> holder = CompletableFuture.supplyAsync(
                () -> template.execute("payments", slow, Receipt.class, () -> {
                    running.countDown();
                    block(finish);
                    return new Receipt("bk_slow", 7);
                }),
                THREADS);
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> template.execute("payments", slow, Receipt.class, () -> new Receipt("bk_twice", 7)))
                .isInstanceOf(RequestInFlightException.class);
        IdempotencyTemplate waiting = template.withPolicy(IdempotencyPolicy.from(template.policy())
                .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(20)))
                .build());
        CompletableFuture<Receipt> waiter = CompletableFuture.supplyAsync(
                () -> waiting.execute("payments", slow, Receipt.class, () -> new Receipt("bk_twice", 7)), THREADS);
        await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(5)).until(() -> !waiter.isDone());
        finish.countDown();
        assertThat(holder.get(20, TimeUnit.SECONDS)).isEqualTo(new Receipt("bk_slow", 7));
        assertThat(waiter.get(20, TimeUnit.SECONDS)).isEqualTo(new Receipt("bk_slow", 7));
    }

    private static void block(CountDownLatch latch) {
        try {
            if (!latch.await(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
