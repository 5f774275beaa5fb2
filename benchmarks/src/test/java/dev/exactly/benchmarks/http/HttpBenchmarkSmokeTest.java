package dev.exactly.benchmarks.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.benchmarks.CpuProfile;
import dev.exactly.benchmarks.store.RedisCluster;
import dev.exactly.benchmarks.store.StoreKind;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.testing.Ci;
import dev.exactly.testing.SystemProperties;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the HTTP benchmark with wrk for a second per endpoint and mix, and checks correctness only: every
 * endpoint answered, no answer failed its checks, no guarded or raw key ran twice, replays never ran the
 * handler; and that the checks do catch an endpoint that is not what it claims. Never speed.
 */
class HttpBenchmarkSmokeTest {

    @BeforeAll
    static void requireWrk() {
        if (Wrk.onPath().isEmpty()) {
            if (Ci.strict()) {
                throw new IllegalStateException(
                        "wrk is not on the PATH, and CI=true requires the HTTP benchmark smoke run");
            }
            Assumptions.abort("wrk is not on the PATH (apt-get install -y wrk)");
        }
    }

    @Test
    void everyEndpointAnswersCorrectlyAndGuardedKeysRunOnce() throws Exception {
        List<Variant> variants = new ArrayList<>(List.of(Variant.values()));
        if (!RedisCluster.available()) {
            if (Ci.strict()) {
                throw new IllegalStateException(
                        "redis-server is not on the PATH, and CI=true requires the cluster run");
            }
            variants.removeAll(List.of(Variant.RAW_REDIS_CLUSTER, Variant.REDIS_CLUSTER));
        }
        HttpBenchmark.Settings settings = new HttpBenchmark.Settings(
                2, 4, Duration.ZERO, Duration.ofSeconds(1), 1, 20, variants, List.of(Mix.values()));

        HttpReport report =
                HttpBenchmark.run(settings, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));

        for (Mix mix : Mix.values()) {
            for (Variant variant : variants) {
                List<PhaseResult> results = report.results(mix, variant);
                assertThat(results).as("%s %s", mix, variant).hasSize(1);
                PhaseResult result = results.getFirst();
                assertThat(result.errors())
                        .as("%s %s: %s", mix, variant.name(mix), result.errorSamples())
                        .isZero();
                assertThat(result.responses())
                        .as("%s %s answers", mix, variant.name(mix))
                        .isPositive();
                if (mix == Mix.REPLAYS && variant != Variant.UNGUARDED) {
                    assertThat(result.executions())
                            .as("%s handler runs on replays", variant.id())
                            .isZero();
                } else if (mix == Mix.MIXED && variant != Variant.UNGUARDED) {
                    // nine in ten are fresh keys, each run once; the tenth a replay, run never
                    assertThat(result.executions())
                            .as("%s handler runs in the mixed mix", variant.name(mix))
                            .isLessThan(result.responses())
                            .isGreaterThanOrEqualTo(result.responses() * 8 / 10);
                } else {
                    assertThat(result.executions())
                            .as("%s handler runs", variant.name(mix))
                            .isBetween(result.responses(), result.responses() + settings.connections());
                }
                if (variant.store().isPresent() && variant.id().contains("redis")) {
                    assertThat(result.redis())
                            .as("Redis command statistics of %s", variant.id())
                            .isNotNull();
                }
            }
        }
        assertThat(report.clean()).isTrue();
        assertThat(report.ratio(Mix.FRESH, Variant.REDIS)).isPresent();
        assertThat(report.fencedRatio(Mix.FRESH, Variant.REDIS)).isPresent();
        assertThat(report.fencedRatio(Mix.REPLAYS, Variant.REDIS))
                .as("a replay's floor is a read either way")
                .isEmpty();
        // the mixed mix's floor is told which requests are replays: one command for those, two for the others
        assertThat(report.ratio(Mix.MIXED, Variant.POSTGRES)).isPresent();
        assertThat(report.results(Mix.MIXED, Variant.RAW_REDIS))
                .allSatisfy(result ->
                        assertThat(result.redis().callsPer(result.responses())).isStrictlyBetween(1.5, 2.0));
        assertThat(report.results(Mix.MIXED, Variant.REDIS))
                .allSatisfy(result -> assertThat(result.redis().callsPer(result.responses()))
                        .as("a replay is one command, a fresh key four: the claim, the script, its GET and its SET")
                        .isStrictlyBetween(3.0, 4.0));
        // the per-request costs are measured, not left blank: the serving JVM's CPU and the Redis process's
        assertThat(report.results(Mix.FRESH, Variant.REDIS)).allSatisfy(result -> {
            assertThat(result.serverCpuNanos()).isPositive();
            assertThat(result.redis()).isNotNull();
            assertThat(result.redis().cpuMicros()).isPositive();
        });
        // the database server's CPU is read for PostgreSQL endpoints, and only for them
        assertThat(report.results(Mix.FRESH, Variant.POSTGRES))
                .allSatisfy(result -> assertThat(result.postgresCpuMicros()).isPresent());
        assertThat(report.results(Mix.FRESH, Variant.REDIS))
                .allSatisfy(result -> assertThat(result.postgresCpuMicros()).isEmpty());
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        report.print(new PrintStream(text, true, StandardCharsets.UTF_8));
        assertThat(text.toString(StandardCharsets.UTF_8))
                .contains(
                        "raw-redis-2",
                        "raw-redis-1",
                        "raw-redis-fenced-2",
                        "raw-pg-2",
                        "raw-pg-1",
                        "raw-pg-told",
                        "mixed 9:1",
                        "vs floor",
                        "vs raw-redis-fenced-2",
                        "every answer passed",
                        "server CPU µs/req",
                        "redis CPU µs/req");
    }

    @Test
    void aSettingThatDoesNotReadIsRefusedNotReplacedByItsDefault() {
        SystemProperties.with(
                "exactly.bench.seconds",
                "60s",
                () -> assertThatThrownBy(HttpBenchmark.Settings::fromSystemProperties)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("-Dexactly.bench.seconds=60s is not a whole number"));
        SystemProperties.with(
                "exactly.bench.warmup",
                "-1",
                () -> assertThatThrownBy(HttpBenchmark.Settings::fromSystemProperties)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("warm-up 0 s or more (-1 s)"));
    }

    @Test
    void aProfileDirectoryThatCannotBeMadeIsRefusedBeforeAnyStoreStarts(@TempDir Path dir) throws IOException {
        Assumptions.assumeTrue(CpuProfile.supported(), "the profiler's library in the jar is Linux x64's");
        Path notADirectory = Files.writeString(dir.resolve("a-file"), "");
        HttpBenchmark.Settings settings = new HttpBenchmark.Settings(
                2,
                4,
                Duration.ZERO,
                Duration.ofSeconds(1),
                1,
                20,
                List.of(Variant.UNGUARDED, Variant.MEMORY),
                List.of(Mix.FRESH));
        ByteArrayOutputStream progress = new ByteArrayOutputStream();

        SystemProperties.with(
                "exactly.bench.profile",
                notADirectory.resolve("stacks").toString(),
                () -> assertThatThrownBy(() ->
                                HttpBenchmark.run(settings, new PrintStream(progress, true, StandardCharsets.UTF_8)))
                        .isInstanceOf(IOException.class)
                        .hasMessageContaining("-Dexactly.bench.profile=" + notADirectory.resolve("stacks"))
                        .hasMessageContaining("cannot create the directory"));
        assertThat(progress.toString(StandardCharsets.UTF_8))
                .as("nothing started before the refusal")
                .isEmpty();
    }

    @Test
    void aRunThatWouldOutliveItsReplayKeysIsRefusedBeforeItStarts() {
        // every endpoint and mix, 40 rounds of 5 s: 92 minutes of load, past the hour the replay keys are kept
        assertThatThrownBy(() -> new HttpBenchmark.Settings(
                        2,
                        32,
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(5),
                        40,
                        1000,
                        List.of(Variant.values()),
                        List.of(Mix.values())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("outlive the replay keys");
        // the documented run (5 rounds) fits
        assertThat(new HttpBenchmark.Settings(
                                2,
                                32,
                                Duration.ofSeconds(2),
                                Duration.ofSeconds(5),
                                5,
                                1000,
                                List.of(Variant.values()),
                                List.of(Mix.values()))
                        .rounds())
                .isEqualTo(5);
    }

    @Test
    void theBallastOutgrowsWhatTheRunWritesToEachServer() {
        // the documented run: three endpoints on the standalone Redis write fresh keys in two mixes for 5 x 5 s and
        // up to four 2 s warm-up passes, at most 7.5 million at 40,000 a second: its tables start at 2^24
        HttpBenchmark.Settings whole = new HttpBenchmark.Settings(
                2,
                32,
                Duration.ofSeconds(2),
                Duration.ofSeconds(5),
                5,
                1000,
                List.of(Variant.values()),
                List.of(Mix.values()));
        assertThat(HttpBenchmark.ballast(whole, StoreKind.REDIS)).isEqualTo((1 << 23) + (1 << 16));
        // two Cluster endpoints, their keys over three nodes: 1.7 million a node
        assertThat(HttpBenchmark.ballast(whole, StoreKind.REDIS_CLUSTER)).isEqualTo((1 << 21) + (1 << 16));
        assertThat(HttpBenchmark.ballast(whole, StoreKind.POSTGRES)).isZero();
        assertThat(HttpBenchmark.ballast(whole, StoreKind.MEMORY)).isZero();
        // replays write no keys: the least ballast
        HttpBenchmark.Settings replays = new HttpBenchmark.Settings(
                2,
                32,
                Duration.ofSeconds(2),
                Duration.ofSeconds(5),
                3,
                1000,
                List.of(Variant.RAW_REDIS, Variant.REDIS),
                List.of(Mix.REPLAYS));
        assertThat(HttpBenchmark.ballast(replays, StoreKind.REDIS)).isEqualTo((1 << 20) + (1 << 16));
    }

    @Test
    void theChecksCatchAnEndpointThatRunsReplaysOrAnswersThemUnmarked(@TempDir Path work) throws Exception {
        Executions executions = new Executions(true);
        BenchServer.Endpoint unguarded = new BenchServer.Endpoint(null, new ChargeServlet(executions), executions);
        try (BenchServer server = BenchServer.start(java.util.Map.of(Variant.UNGUARDED, unguarded))) {
            Path keys = work.resolve("keys");
            Files.writeString(keys, "smoke-replay-0\t{\"reference\":\"smoke-replay-0\"}\n");
            Wrk wrk = Wrk.create(work);

            // replays that must come back marked and identical: the unguarded endpoint runs them again
            Wrk.Report report = wrk.run(
                    server.uri(Variant.UNGUARDED, Mix.REPLAYS),
                    Mix.REPLAYS,
                    "smoke",
                    KeyOrder.RANDOM,
                    true,
                    keys,
                    1,
                    2,
                    Duration.ofSeconds(1));

            assertThat(report.responses()).isPositive();
            assertThat(report.failed()).isEqualTo(report.responses());
            assertThat(report.errorSamples()).anyMatch(sample -> sample.contains("not marked"));
            // and the execution account sees one key run over and over
            assertThat(executions.duplicates()).isGreaterThan(0);
            assertThat(executions.duplicateSamples()).contains("smoke-replay-0");
        }
    }

    @Test
    void randomKeysStartAnywhereAndOrderedKeysFollowEachOther(@TempDir Path work) throws Exception {
        Executions executions = new Executions(true);
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        HttpServlet recording = new HttpServlet() {
            private final ChargeServlet charges = new ChargeServlet(executions);

            @Override
            protected void service(HttpServletRequest request, HttpServletResponse response)
                    throws ServletException, IOException {
                seen.add(request.getHeader(IdempotencyFilter.KEY_HEADER));
                charges.service((ServletRequest) request, (ServletResponse) response);
            }
        };
        BenchServer.Endpoint unguarded = new BenchServer.Endpoint(null, recording, executions);
        try (BenchServer server = BenchServer.start(java.util.Map.of(Variant.UNGUARDED, unguarded))) {
            Wrk wrk = Wrk.create(work);
            Path none = work.resolve("no-keys");

            Wrk.Report random = wrk.run(
                    server.uri(Variant.UNGUARDED, Mix.FRESH),
                    Mix.FRESH,
                    "r1",
                    KeyOrder.RANDOM,
                    false,
                    none,
                    2,
                    4,
                    Duration.ofSeconds(1));
            List<String> randomKeys = List.copyOf(seen);
            seen.clear();
            Wrk.Report ordered = wrk.run(
                    server.uri(Variant.UNGUARDED, Mix.FRESH),
                    Mix.FRESH,
                    "o1",
                    KeyOrder.ORDERED,
                    false,
                    none,
                    2,
                    4,
                    Duration.ofSeconds(1));
            List<String> orderedKeys = List.copyOf(seen);

            assertThat(random.failed()).as("%s", random.errorSamples()).isZero();
            assertThat(ordered.failed()).as("%s", ordered.errorSamples()).isZero();
            // every key once: the random prefix does not hide a repeated series and number
            assertThat(executions.duplicates()).isZero();
            assertThat(randomKeys)
                    .hasSizeGreaterThan(100)
                    .doesNotHaveDuplicates()
                    .allMatch(key -> key.matches("[0-9a-f]{8}\\.r1-[12]-[0-9]+"));
            // random keys fall all over a sorted index: their first hex digits take all sixteen values
            assertThat(randomKeys.stream().map(key -> key.charAt(0)).distinct().count())
                    .isEqualTo(16);
            // ordered keys follow each other: a thread's are one run of consecutive numbers behind a common prefix
            assertThat(orderedKeys)
                    .hasSizeGreaterThan(100)
                    .doesNotHaveDuplicates()
                    .allMatch(key -> key.matches("o1-[12]-[0-9]+"));
            List<Integer> firstThread = orderedKeys.stream()
                    .filter(key -> key.startsWith("o1-1-"))
                    .map(key -> Integer.parseInt(key.substring("o1-1-".length())))
                    .sorted()
                    .toList();
            assertThat(firstThread.getLast() - firstThread.getFirst() + 1).isEqualTo(firstThread.size());
        }
    }

    @Test
    void aRandomPrefixDoesNotHideAKeyThatRanTwice() {
        Executions executions = new Executions(true);

        executions.record("0000abcd.h1-p0-1-7");
        executions.record("ffff0000.h1-p0-1-8");
        executions.record("h1-p0-1-9");
        assertThat(executions.duplicates()).isZero();

        // the same series and number is the same key of the load, whatever its prefix
        executions.record("12345678.h1-p0-1-7");
        executions.record("h1-p0-1-8");
        assertThat(executions.duplicates()).isEqualTo(2);
        assertThat(KeyOrder.ordered("12345678.h1-p0-1-7")).isEqualTo("h1-p0-1-7");
        assertThat(KeyOrder.RANDOM.key("h1-replay-postgres-3", new SplittableRandom(1)))
                .matches("[0-9a-f]{8}\\.h1-replay-postgres-3");
        assertThat(KeyOrder.ORDERED.key("h1-replay-postgres-3", new SplittableRandom(1)))
                .isEqualTo("h1-replay-postgres-3");
    }
}
