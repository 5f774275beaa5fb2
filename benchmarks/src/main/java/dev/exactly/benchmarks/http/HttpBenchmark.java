package dev.exactly.benchmarks.http;

import dev.exactly.benchmarks.Machine;
import dev.exactly.benchmarks.store.StoreFixture;
import dev.exactly.benchmarks.store.StoreKind;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.TenantResolver;
import jakarta.servlet.Filter;
import java.io.PrintStream;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The HTTP benchmark: the same trivial JSON endpoint unguarded and guarded by {@link IdempotencyFilter}
 * on the in-memory, Redis and PostgreSQL stores, all served by one embedded Tomcat and measured in one
 * run, with fresh keys and with a replay-heavy mix. Phases are interleaved (every variant once per
 * round) so that a change in the machine's load spreads over all of them.
 *
 * <pre>
 * ./mvnw -pl benchmarks -am -DskipTests package
 * java -cp benchmarks/target/benchmarks.jar dev.exactly.benchmarks.http.HttpBenchmark
 * </pre>
 *
 * Options (system properties): {@code -Dexactly.bench.clients=32 -Dexactly.bench.warmup=2
 * -Dexactly.bench.seconds=4 -Dexactly.bench.rounds=2 -Dexactly.bench.replayShare=0.9
 * -Dexactly.bench.replayKeys=1000}. Exits with status 1 if any request failed or any handler ran a
 * different number of times than its fresh keys.
 */
public final class HttpBenchmark {
    /** The guarded route's policy: records are kept 10 minutes, long enough for every replay of the run. */
    static final IdempotencyPolicy ROUTE_POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30)).retention(Duration.ofMinutes(10)).build();
    private static final int STORE_CONNECTIONS = 16;

    private HttpBenchmark() {}

    /**
     * How to run.
     *
     * @param clients     concurrent clients
     * @param warmup      time per (mix, variant) before measuring; zero skips the warm-up
     * @param measure     time per (mix, variant) per round
     * @param rounds      measured rounds
     * @param replayShare the replay share of the replay-heavy mix
     * @param replayKeys  keys completed per variant before the phases, for replays
     * @param variants    endpoints to measure (unguarded is always measured, as the denominator)
     */
    public record Settings(int clients, Duration warmup, Duration measure, int rounds, double replayShare,
            int replayKeys, List<Variant> variants) {

        public Settings {
            variants = List.copyOf(variants);
            if (clients < 1 || rounds < 1 || replayKeys < 1 || measure.isNegative() || measure.isZero()
                    || warmup.isNegative()) {
                throw new IllegalArgumentException("clients, rounds, replayKeys and the measured time must be positive");
            }
            if (!variants.contains(Variant.UNGUARDED)) {
                throw new IllegalArgumentException("the unguarded endpoint is the denominator of every ratio");
            }
        }

        /** 32 clients, 2 s warm-up, 2 rounds of 4 s, 90 % replays, 1000 replay keys, every variant. */
        public static Settings defaults() {
            return new Settings(32, Duration.ofSeconds(2), Duration.ofSeconds(4), 2, 0.9, 1000,
                    List.of(Variant.values()));
        }

        static Settings fromSystemProperties() {
            Settings d = defaults();
            return new Settings(
                    Integer.getInteger("exactly.bench.clients", d.clients()),
                    seconds("exactly.bench.warmup", d.warmup()),
                    seconds("exactly.bench.seconds", d.measure()),
                    Integer.getInteger("exactly.bench.rounds", d.rounds()),
                    Double.parseDouble(System.getProperty("exactly.bench.replayShare", Double.toString(d.replayShare()))),
                    Integer.getInteger("exactly.bench.replayKeys", d.replayKeys()),
                    d.variants());
        }

        private static Duration seconds(String property, Duration fallback) {
            String value = System.getProperty(property);
            return value == null ? fallback : Duration.ofMillis(Math.round(Double.parseDouble(value) * 1000));
        }

        List<Mix> mixes() {
            return List.of(Mix.fresh(), Mix.replays(replayShare));
        }
    }

    public static void main(String[] args) throws Exception {
        Settings settings = Settings.fromSystemProperties();
        PrintStream out = System.out;
        out.printf("HTTP benchmark: %d clients, %s warm-up and %d x %s per endpoint and mix, on loopback%n",
                settings.clients(), settings.warmup(), settings.rounds(), settings.measure());
        HttpReport report = run(settings, out);
        report.print(out);
        if (!report.clean()) {
            System.exit(1);
        }
    }

    /** Runs every phase and returns the report; progress goes to {@code progress}. */
    public static HttpReport run(Settings settings, PrintStream progress) throws Exception {
        Machine before = Machine.sample(InstantSource.system());
        long started = System.nanoTime();
        String run = "h" + Long.toHexString(System.nanoTime());
        List<StoreFixture> fixtures = new ArrayList<>();
        Map<Variant, Filter> filters = new EnumMap<>(Variant.class);
        try {
            for (Variant variant : settings.variants()) {
                if (variant.store().isPresent()) {
                    StoreFixture fixture = open(variant.store().get(), fixtures);
                    filters.put(variant, IdempotencyFilter.builder(fixture.engine())
                            .route(IdempotentRoute.builder("POST", "/v1/charges").policy(ROUTE_POLICY).build())
                            .tenantResolver(TenantResolver.single("bench"))
                            .build());
                }
            }
            try (BenchServer server = BenchServer.start(filters, settings.variants());
                    LoadGenerator load = new LoadGenerator()) {
                progress.printf("stores and server ready in %d ms%n", (System.nanoTime() - started) / 1_000_000);
                return measure(settings, server, load, run, before, progress);
            }
        } finally {
            for (StoreFixture fixture : fixtures.reversed()) {
                fixture.close();
            }
        }
    }

    private static StoreFixture open(StoreKind kind, List<StoreFixture> fixtures) {
        StoreFixture fixture = StoreFixture.open(kind, STORE_CONNECTIONS);
        fixtures.add(fixture);
        return fixture;
    }

    private static HttpReport measure(Settings settings, BenchServer server, LoadGenerator load, String run,
            Machine before, PrintStream progress) throws InterruptedException {
        HttpReport.Builder report = HttpReport.builder(settings, before);
        Map<Variant, List<String>> replayKeys = new EnumMap<>(Variant.class);
        for (Variant variant : settings.variants()) {
            List<String> keys = new ArrayList<>(settings.replayKeys());
            for (int i = 0; i < settings.replayKeys(); i++) {
                keys.add(run + "-replay-" + variant.id() + "-" + i);
            }
            replayKeys.put(variant, List.copyOf(keys));
            PhaseResult prepared = load.prepare(server.charges(variant), keys, settings.clients());
            progress.printf("prepared %d replay keys of %-10s in %d ms%n",
                    keys.size(), variant.id(), prepared.elapsedNanos() / 1_000_000);
            report.prepared(variant, prepared);
        }
        int phase = 0;
        if (!settings.warmup().isZero()) {
            for (Mix mix : settings.mixes()) {
                for (Variant variant : settings.variants()) {
                    progress.printf("warm-up  %-12s %-10s%n", mix.name(), variant.id());
                    report.warmup(variant, load.run(server.charges(variant), variant.guarded(), settings.clients(),
                            settings.warmup(), mix.replayShare(), replayKeys.get(variant), run + "-" + phase++ + "-"));
                }
            }
        }
        for (int round = 1; round <= settings.rounds(); round++) {
            for (Mix mix : settings.mixes()) {
                for (Variant variant : settings.variants()) {
                    PhaseResult result = load.run(server.charges(variant), variant.guarded(), settings.clients(),
                            settings.measure(), mix.replayShare(), replayKeys.get(variant), run + "-" + phase++ + "-");
                    progress.printf("round %d  %-12s %-10s %8.0f req/s, %d errors%n",
                            round, mix.name(), variant.id(), result.rate(), result.errors());
                    report.measured(mix, variant, result);
                }
            }
        }
        for (Variant variant : settings.variants()) {
            report.executions(variant, server.executions(variant));
        }
        return report.build(Machine.sample(InstantSource.system()));
    }
}
