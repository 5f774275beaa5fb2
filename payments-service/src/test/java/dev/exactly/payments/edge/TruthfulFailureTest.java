package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import dev.exactly.idempotency.spi.ForwardingIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.payments.PaymentsApplication;
import dev.exactly.payments.ServiceTest;
import dev.exactly.psp.PspSimulator;
import dev.exactly.testing.OwnPostgres;
import dev.exactly.testing.RedisProcess;
import dev.exactly.testing.Signals;
import dev.exactly.testing.TestRedis;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Every answer tells the truth about what happened. A charge is held at one point of its way — before
 * or after the hot tier's claim, before the processor saw it, after the processor captured it, after the
 * durable commit and before the hot tier records it — while the test freezes the hot tier's Redis (a
 * server of its own, {@code SIGSTOP}), crashes the durable PostgreSQL (a server of its own,
 * {@code pg_ctl stop -m immediate}) or freezes it ({@code SIGSTOP} to every one of its processes: it stops
 * answering, its sockets stay open); then the request goes on and its answer, which must come within a
 * bound however long the fault lasts, is checked against the processor's capture log and the committed
 * rows:
 * <ul>
 *   <li>"refused before it ran" ({@code idempotency-store-unavailable}, {@code database-unavailable}):
 *       nothing of this charge exists and nothing was captured;</li>
 *   <li>"may have run" ({@code outcome-unknown} and the like) is allowed only where something ran;</li>
 *   <li>201 only when the charge is really committed and captured once;</li>
 *   <li>no answer says "not executed" or "nothing was changed", and every 503 says to retry with the same
 *       key.</li>
 * </ul>
 * Each point expects one kind of answer, which also shows the fault hit its window. After the fault is
 * undone, retries with the same key end in exactly one charge, one capture and one journal entry.
 */
@SpringBootTest(
        classes = {PaymentsApplication.class, TruthfulFailureTest.HotTier.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class TruthfulFailureTest extends ServiceTest {
    private static final Set<String> REFUSED_BEFORE_IT_RAN =
            Set.of("idempotency-store-unavailable", "database-unavailable");
    private static final Duration REDIS_COMMAND_TIMEOUT = Duration.ofSeconds(1);

    private static final Servers SERVERS = new Servers();

    enum Point {
        BEFORE_HOT_CLAIM,
        AFTER_HOT_CLAIM,
        BEFORE_PROCESSOR,
        AFTER_PROCESSOR_CAPTURED,
        BEFORE_HOT_RECORD
    }

    enum Fault {
        REDIS_FROZEN,
        POSTGRES_CRASHED,
        POSTGRES_FROZEN
    }

    /** The servers this test breaks, started once before the service and stopped when the JVM ends. */
    static final class Servers {
        final RedisProcess redis;
        final OwnPostgres postgres;
        final PspSimulator processor = PspSimulator.start();
        final HoldingProxy proxy = HoldingProxy.to(processor.baseUri());

        Servers() {
            try {
                Path dir = Files.createTempDirectory("exactly-truthful-");
                redis = RedisProcess.start(TestRedis.redisServerBinary(dir), TestRedis.freePort(), List.of());
                postgres = OwnPostgres.start(dir.resolve("pg"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                Signals.resume(redis.pid());
                try {
                    postgres.thaw();
                } catch (RuntimeException notRunning) {
                    // a server that is not running has nothing to thaw
                }
                proxy.close();
                processor.close();
                redis.stop();
                postgres.close();
            }));
        }
    }

    /** The hot tier: Redis of this test's own, with gates around its claim and its recording. */
    @TestConfiguration
    static class HotTier {
        @Bean(destroyMethod = "close")
        GatedStore idempotencyStore() {
            return new GatedStore(RedisIdempotencyStore.create(
                    "redis://127.0.0.1:" + SERVERS.redis.port(),
                    RedisStoreConfig.custom()
                            .keyPrefix("truthful:")
                            .commandTimeout(REDIS_COMMAND_TIMEOUT)
                            .build()));
        }
    }

    /** A store with gates before and after a claim and before a completion; counts store failures. */
    static final class GatedStore extends ForwardingIdempotencyStore {
        final Gate beforeClaim = new Gate("before the hot claim");
        final Gate afterClaim = new Gate("after the hot claim");
        final Gate beforeRecord = new Gate("before the hot tier records");
        final AtomicInteger failures = new AtomicInteger();

        GatedStore(IdempotencyStore delegate) {
            super(delegate);
        }

        private <T> T counted(Supplier<T> call) {
            try {
                return call.get();
            } catch (RuntimeException e) {
                failures.incrementAndGet();
                throw e;
            }
        }

        @Override
        public ClaimOutcome claim(
                ScopeKey key, Fingerprint fingerprint, OwnerToken owner, Duration lease, Duration retention) {
            beforeClaim.pass();
            ClaimOutcome outcome = counted(() -> super.claim(key, fingerprint, owner, lease, retention));
            afterClaim.pass();
            return outcome;
        }

        @Override
        public boolean complete(ScopeKey key, OwnerToken owner, RecordStatus status, StoredResponse response) {
            beforeRecord.pass();
            return counted(() -> super.complete(key, owner, status, response));
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("exactly.payments.database-url", SERVERS.postgres::jdbcUrl);
        registry.add("exactly.payments.psp-url", () -> SERVERS.proxy.uri().toString());
        registry.add("exactly.payments.demo", () -> "true");
        registry.add("exactly.payments.lease", () -> "2s");
        registry.add("exactly.payments.database-socket-timeout", () -> "2s");
        registry.add("exactly.payments.processor.request-timeout", () -> "10s");
        registry.add("exactly.payments.recovery.interval", () -> "200ms");
        registry.add("exactly.payments.recovery.retry-delay", () -> "100ms");
        registry.add("exactly.payments.recovery.max-attempts", () -> "20");
        registry.add("exactly.idempotency.in-flight.policy", () -> "reject");
        // no rest for the hot tier after it failed: every scenario's request tries it, and meets its gates
        registry.add("exactly.idempotency.store-unavailable-retry-after", () -> "0s");
    }

    @org.springframework.beans.factory.annotation.Autowired
    GatedStore hot;

    @Override
    protected PspSimulator psp() {
        return SERVERS.processor;
    }

    static Stream<Arguments> scenarios() {
        return Stream.of(
                // the hot tier's claim fails: the request passes to the durable tier, which charges once
                Arguments.of(Point.BEFORE_HOT_CLAIM, Fault.REDIS_FROZEN, Set.of("201")),
                Arguments.of(Point.AFTER_HOT_CLAIM, Fault.REDIS_FROZEN, Set.of("201")),
                Arguments.of(Point.BEFORE_PROCESSOR, Fault.REDIS_FROZEN, Set.of("201")),
                Arguments.of(Point.AFTER_PROCESSOR_CAPTURED, Fault.REDIS_FROZEN, Set.of("201")),
                Arguments.of(Point.BEFORE_HOT_RECORD, Fault.REDIS_FROZEN, Set.of("201")),
                Arguments.of(
                        Point.BEFORE_HOT_CLAIM,
                        Fault.POSTGRES_CRASHED,
                        Set.of("database-unavailable", "outcome-unknown")),
                Arguments.of(
                        Point.AFTER_HOT_CLAIM,
                        Fault.POSTGRES_CRASHED,
                        Set.of("database-unavailable", "outcome-unknown")),
                Arguments.of(Point.BEFORE_PROCESSOR, Fault.POSTGRES_CRASHED, Set.of("outcome-unknown")),
                Arguments.of(Point.AFTER_PROCESSOR_CAPTURED, Fault.POSTGRES_CRASHED, Set.of("outcome-unknown")),
                Arguments.of(Point.BEFORE_HOT_RECORD, Fault.POSTGRES_CRASHED, Set.of("201")),
                Arguments.of(
                        Point.BEFORE_HOT_CLAIM,
                        Fault.POSTGRES_FROZEN,
                        Set.of("database-unavailable", "outcome-unknown")),
                Arguments.of(
                        Point.AFTER_HOT_CLAIM,
                        Fault.POSTGRES_FROZEN,
                        Set.of("database-unavailable", "outcome-unknown")),
                Arguments.of(Point.BEFORE_PROCESSOR, Fault.POSTGRES_FROZEN, Set.of("outcome-unknown")),
                Arguments.of(Point.AFTER_PROCESSOR_CAPTURED, Fault.POSTGRES_FROZEN, Set.of("outcome-unknown")),
                Arguments.of(Point.BEFORE_HOT_RECORD, Fault.POSTGRES_FROZEN, Set.of("201")));
    }

    @ParameterizedTest(name = "{1} at {0} -> {2}")
    @MethodSource("scenarios")
    // the ordinals only give each scenario a customer and an amount of its own
    @SuppressWarnings("EnumOrdinal")
    void theAnswerSaysWhatHappened(Point point, Fault fault, Set<String> expected) throws Exception {
        String customer = "cus_" + point.name().toLowerCase(java.util.Locale.ROOT) + "_" + fault.ordinal();
        String key = "truthful-" + point + "-" + fault;
        String body = charge(1_000 + point.ordinal() * 10 + fault.ordinal(), customer);
        int failuresBefore = hot.failures.get();

        CountDownLatch[] gate = gate(point).arm();
        CompletableFuture<Answer> pending = CompletableFuture.supplyAsync(
                () -> post("/v1/charges", ACME, key, body), Executors.newVirtualThreadPerTaskExecutor());
        boolean reached = Gate.awaitReached(gate, Duration.ofSeconds(60));
        if (!reached) {
            // a gate left armed would hold the next scenario's request at this scenario's point
            gate(point).disarm();
            Gate.release(gate);
        }
        assertThat(reached).as("the request reached " + point).isTrue();
        breakIt(fault);
        Answer answer;
        try {
            Gate.release(gate);
            // the fault lasts until the answer came: it must come without it being undone (a frozen database
            // held the request for as long as it stayed frozen)
            answer = pending.get(fault == Fault.POSTGRES_FROZEN ? 30 : 120, TimeUnit.SECONDS);
        } finally {
            mend(fault);
        }
        if (fault != Fault.REDIS_FROZEN) {
            // the test reads the books through the service's pool: connections the fault broke but the pool
            // used within its validation window would be handed out unchecked, so they go before the reads
            ((HikariDataSource) jdbc.dataSource()).getHikariPoolMXBean().softEvictConnections();
        }

        String outcome = answer.status() == 201 ? "201" : answer.problemType();
        System.out.printf("[truthful] %s at %s: %s%n", fault, point, outcome);
        assertThat(expected)
                .as("answer to %s at %s: %s", fault, point, answer.text())
                .contains(outcome);
        assertThat(answer.text()).doesNotContain("not executed").doesNotContain("nothing was changed");
        if (answer.status() == 503) {
            assertThat(answer.text()).contains("same Idempotency-Key");
            assertThat(answer.header("Retry-After")).isNotEmpty();
        }
        if (fault == Fault.REDIS_FROZEN) {
            assertThat(hot.failures.get())
                    .as("the frozen Redis failed a hot-tier call")
                    .isGreaterThan(failuresBefore);
        }
        if (REFUSED_BEFORE_IT_RAN.contains(outcome)) {
            assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = ?", customer))
                    .as("a request refused before it ran left no charge")
                    .isZero();
            assertThat(psp().captureCounts().keySet())
                    .as("and nothing was captured")
                    .noneMatch(k -> k.contains(customer));
        }
        if (answer.status() == 201) {
            String id = answer.json().get("id").stringValue();
            assertThat(chargeStatus(id)).isEqualTo("succeeded");
            assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
        }

        // afterwards, retries with the same key settle it: one charge, one capture, one entry
        Answer settled = await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(300))
                .until(() -> post("/v1/charges", ACME, key, body), a -> a.status() == 201);
        String id = settled.json().get("id").stringValue();
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = ?", customer))
                .isEqualTo(1);
        assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
        assertThat(entriesOf(id)).isEqualTo(1);
        if (answer.status() == 201) {
            assertThat(settled.body()).as("the retry replays the first answer").isEqualTo(answer.body());
        }
        assertLedgerBalanced();
    }

    @Test
    void withTheHotTierFrozenConcurrentDuplicatesChargeOnceThroughTheDurableTier() throws Exception {
        String customer = "cus_frozen_duplicates";
        String key = "frozen-duplicates";
        String body = charge(4_242, customer);
        int failuresBefore = hot.failures.get();
        List<Answer> answers = new ArrayList<>();
        breakIt(Fault.REDIS_FROZEN);
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            CountDownLatch go = new CountDownLatch(1);
            List<java.util.concurrent.Future<Answer>> sent = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                sent.add(pool.submit(() -> {
                    go.await();
                    return post("/v1/charges", ACME, key, body);
                }));
            }
            go.countDown();
            for (java.util.concurrent.Future<Answer> f : sent) {
                answers.add(f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            mend(Fault.REDIS_FROZEN);
        }
        assertThat(hot.failures.get())
                .as("the frozen Redis failed the hot claims")
                .isGreaterThan(failuresBefore);
        Set<String> charged = new java.util.HashSet<>();
        for (Answer answer : answers) {
            String outcome = answer.status() == 201 ? "201" : answer.problemType();
            assertThat(outcome).as(answer.text()).isIn("201", "idempotency-key-in-use");
            if (answer.status() == 201) {
                charged.add(answer.json().get("id").stringValue());
            }
        }
        assertThat(charged).as("every 201 is the one charge").hasSize(1);
        String id = charged.iterator().next();
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = ?", customer))
                .isEqualTo(1);
        assertThat(psp().captureCount("exactly_" + id)).isEqualTo(1);
        assertThat(entriesOf(id)).isEqualTo(1);
        Answer later = post("/v1/charges", ACME, key, body);
        assertThat(later.status()).isEqualTo(201);
        assertThat(later.json().get("id").stringValue()).isEqualTo(id);
        assertThat(later.header("Idempotent-Replayed")).isEqualTo("true");
        assertLedgerBalanced();
    }

    private Gate gate(Point point) {
        return switch (point) {
            case BEFORE_HOT_CLAIM -> hot.beforeClaim;
            case AFTER_HOT_CLAIM -> hot.afterClaim;
            case BEFORE_PROCESSOR -> SERVERS.proxy.beforeProcessor;
            case AFTER_PROCESSOR_CAPTURED -> SERVERS.proxy.afterProcessor;
            case BEFORE_HOT_RECORD -> hot.beforeRecord;
        };
    }

    private static void breakIt(Fault fault) {
        switch (fault) {
            case REDIS_FROZEN -> Signals.stop(SERVERS.redis.pid());
            case POSTGRES_CRASHED -> SERVERS.postgres.stopImmediate();
            case POSTGRES_FROZEN -> SERVERS.postgres.freeze();
        }
    }

    /**
     * Undoes a fault. A thawed Redis is waited for until the hot tier answers again: its store refuses to
     * reconnect for a moment after a failed connection (a Redis frozen while the store connected), and a
     * scenario started in that moment passed its request by the hot tier, so that it never met the gate after
     * the hot claim that the scenario waited for.
     */
    private void mend(Fault fault) {
        switch (fault) {
            case REDIS_FROZEN -> {
                Signals.resume(SERVERS.redis.pid());
                ScopeKey probe = new ScopeKey("0".repeat(64)); // no request has this scope
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(50))
                        .ignoreExceptions()
                        .until(() -> hot.find(probe).isEmpty());
            }
            case POSTGRES_CRASHED -> SERVERS.postgres.startAgain();
            case POSTGRES_FROZEN -> SERVERS.postgres.thaw();
        }
    }
}
