package dev.exactly.benchmarks.http;

import static org.awaitility.Awaitility.await;

import dev.exactly.benchmarks.CpuProfile;
import dev.exactly.benchmarks.Machine;
import dev.exactly.benchmarks.store.RawBaseline;
import dev.exactly.benchmarks.store.StoreFixture;
import dev.exactly.benchmarks.store.StoreKind;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.postgres.PostgresStoreConfig;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.servlet.TenantResolver;
import dev.exactly.testing.ProcessCpu;
import dev.exactly.testing.SystemProperties;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP benchmark: one trivial JSON endpoint served by one embedded Tomcat (virtual threads) in
 * several variants, measured in one run by an outside load generator (wrk, a C process with its own
 * threads): unguarded; behind {@link IdempotencyFilter} on the in-memory, Redis (standalone and Cluster)
 * and PostgreSQL stores; and, per server, a raw baseline that does by hand the least any guard must do
 * there, through the same client library and pool: two raw round trips for a fresh key, one for a replay
 * (see {@link Variant}). Each mix (fresh keys; replays of keys completed beforehand; nine fresh keys in ten
 * with a replay, {@link Mix#MIXED}) runs every endpoint
 * once per round, a guarded endpoint next to its floor (after it in odd rounds, before it in even ones), so
 * that a change in the machine's load falls on both sides of a ratio and neither side always runs second;
 * the ratios are per round, reported as the median and the spread.
 *
 * <p>Every answer is checked by the load script (status, whose answer it is, replay marker, replayed bytes
 * identical to the first answer), and every execution of the handler is counted per key: an error, a
 * key that ran twice on a guarded or raw endpoint, a replay that ran the handler, or executions that do
 * not match the answers fail the run (exit status 1).
 *
 * <pre>
 * benchmarks/http-benchmark.sh      # installs wrk if missing, builds, runs
 * </pre>
 *
 * Options (system properties): {@code -Dexactly.bench.threads=2 -Dexactly.bench.connections=32
 * -Dexactly.bench.warmup=2 -Dexactly.bench.seconds=5 -Dexactly.bench.rounds=3
 * -Dexactly.bench.replayKeys=1000 -Dexactly.bench.endpoints=unguarded,memory,raw-redis,redis,...
 * -Dexactly.bench.mixes=fresh,replays,mixed -Dexactly.bench.keys=random -Dexactly.bench.pgSharedLanes=4} ({@link
 * KeyOrder}; the PostgreSQL store's shared
 * statement lanes; 0: every write its own statement), and {@code -Dexactly.bench.profile=DIR}: CPU samples of the measured
 * phases ({@link CpuProfile}, one per millisecond of the JVM's CPU time), one file of collapsed stacks per mix and
 * endpoint in {@code DIR}, and for each guarded endpoint the frames whose self time per request differs most
 * from its floor's, printed after the rounds. Sampling adds work to the server it measures: the rates of a
 * profiled run are not the ones to quote.
 */
public final class HttpBenchmark {
    /**
     * How long the replay keys last: the raw floors keep their keys, and the guarded route its records, this
     * long; a run planned to last longer is refused.
     */
    static final Duration KEPT = RawBaseline.KEPT;

    /** The warm-up ends after a pass in which the JIT compiled for less than this share of the pass's time. */
    static final double SETTLED_JIT_SHARE = 0.02;

    /** Warm-up passes at most. */
    static final int MAX_WARMUP_PASSES = 4;
    /** Fresh keys a second that {@link #ballast} counts per endpoint (this machine reaches 30,000-37,000). */
    static final int BALLAST_KEYS_PER_SECOND = 40_000;
    /** The guarded route's policy: records are kept an hour, longer than any run that is allowed to start. */
    static final IdempotencyPolicy ROUTE_POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30))
            .retention(KEPT)
            .build();

    private static final int STORE_CONNECTIONS = 16;
    private static final int PREPARE_CLIENTS = 8;
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);
    /** Frames listed per guarded endpoint in a profiled run. */
    private static final int MOVED_FRAMES = 25;

    private HttpBenchmark() {}

    /**
     * How to run.
     *
     * @param threads     load generator threads ({@code wrk -t})
     * @param connections concurrent keep-alive connections, one request in flight on each ({@code wrk -c})
     * @param warmup      time per (mix, endpoint) in a warm-up pass, whole seconds; passes are repeated until the
     *                    JIT compiled for less than {@value #SETTLED_JIT_SHARE} of one, at most
     *                    {@value #MAX_WARMUP_PASSES}; zero skips the warm-up
     * @param measure     time per (mix, endpoint) per round, whole seconds
     * @param rounds      measured rounds
     * @param replayKeys  keys completed per endpoint before the phases, for replays
     * @param variants    endpoints to measure, in this order within odd rounds and reversed in even ones
     * @param mixes       the mixes to run, in this order within a round
     * @param keys        where the keys fall in a sorted index ({@link KeyOrder#RANDOM}, as clients send them)
     */
    public record Settings(
            int threads,
            int connections,
            Duration warmup,
            Duration measure,
            int rounds,
            int replayKeys,
            List<Variant> variants,
            List<Mix> mixes,
            KeyOrder keys) {

        public Settings {
            variants = List.copyOf(variants);
            mixes = List.copyOf(mixes);
            if (threads < 1
                    || connections < threads
                    || rounds < 1
                    || replayKeys < 1
                    || variants.isEmpty()
                    || mixes.isEmpty()) {
                throw new IllegalArgumentException("threads (" + threads + "), rounds (" + rounds + ") and replayKeys ("
                        + replayKeys + ") must be positive, connections (" + connections + ") at least threads, "
                        + "and endpoints and mixes not empty");
            }
            if (measure.toSeconds() < 1
                    || warmup.isNegative()
                    || measure.toMillis() % 1000 != 0
                    || warmup.toMillis() % 1000 != 0) {
                throw new IllegalArgumentException("the load generator times whole seconds: measure at least 1 s ("
                        + measure.toSeconds() + " s), warm-up 0 s or more (" + warmup.toSeconds() + " s)");
            }
            // the replay keys are completed before the first phase and read in the last one: they must outlive
            // the run (with room for preparation, collections and waits between phases)
            Duration planned = warmup.multipliedBy(MAX_WARMUP_PASSES)
                    .plus(measure.multipliedBy(rounds))
                    .multipliedBy((long) variants.size() * mixes.size());
            if (planned.multipliedBy(3).dividedBy(2).compareTo(KEPT) > 0) {
                throw new IllegalArgumentException("a run of " + planned.toMinutes() + " minutes of load ("
                        + variants.size()
                        + " endpoints, " + mixes.size() + " mixes, " + rounds
                        + " rounds) would outlive the replay keys, "
                        + "kept " + KEPT.toMinutes() + " minutes: measure fewer endpoints, mixes or rounds per run");
            }
        }

        /** Random keys, as clients send them. */
        public Settings(
                int threads,
                int connections,
                Duration warmup,
                Duration measure,
                int rounds,
                int replayKeys,
                List<Variant> variants,
                List<Mix> mixes) {
            this(threads, connections, warmup, measure, rounds, replayKeys, variants, mixes, KeyOrder.RANDOM);
        }

        /** wrk -t2 -c32, 2 s warm-up, 3 rounds of 5 s, 1000 replay keys, every endpoint and mix, random keys. */
        public static Settings defaults() {
            return new Settings(
                    2,
                    32,
                    Duration.ofSeconds(2),
                    Duration.ofSeconds(5),
                    3,
                    1000,
                    List.of(Variant.values()),
                    List.of(Mix.values()));
        }

        static Settings fromSystemProperties() {
            Settings d = defaults();
            String endpoints = System.getProperty("exactly.bench.endpoints");
            String mixes = System.getProperty("exactly.bench.mixes");
            return new Settings(
                    SystemProperties.integer("exactly.bench.threads", d.threads()),
                    SystemProperties.integer("exactly.bench.connections", d.connections()),
                    SystemProperties.seconds("exactly.bench.warmup", d.warmup()),
                    SystemProperties.seconds("exactly.bench.seconds", d.measure()),
                    SystemProperties.integer("exactly.bench.rounds", d.rounds()),
                    SystemProperties.integer("exactly.bench.replayKeys", d.replayKeys()),
                    endpoints == null
                            ? d.variants()
                            : Arrays.stream(endpoints.split(","))
                                    .map(String::strip)
                                    .map(Variant::of)
                                    .toList(),
                    mixes == null
                            ? d.mixes()
                            : Arrays.stream(mixes.split(","))
                                    .map(String::strip)
                                    .map(Mix::of)
                                    .toList(),
                    KeyOrder.of(
                            System.getProperty("exactly.bench.keys", d.keys().mode())));
        }
    }

    public static void main(String[] args) throws Exception {
        Settings settings = Settings.fromSystemProperties();
        PrintStream out = System.out;
        out.printf(
                "HTTP benchmark: wrk -t%d -c%d, %d s warm-up and %d x %d s per endpoint and mix, loopback, %s keys%n",
                settings.threads(),
                settings.connections(),
                settings.warmup().toSeconds(),
                settings.rounds(),
                settings.measure().toSeconds(),
                settings.keys().mode());
        out.printf(
                "raw Redis floors' flushes: %s (the store's: consolidated)%n",
                System.getProperty(StoreFixture.RAW_FLUSHES_PROPERTY, "lettuce"));
        out.printf(
                "Redis server binary: %s%n",
                Objects.requireNonNullElse(
                        StoreFixture.redisServerBinary(), "none of the benchmark's own (the test Redis)"));
        out.printf(
                "PostgreSQL store's shared statement lanes: %d (0: every claim and completion its own statement)%n",
                SystemProperties.integer(
                        StoreFixture.PG_SHARED_LANES_PROPERTY,
                        PostgresStoreConfig.ofDefaults().sharedStatementLanes()));
        Integer ballast = SystemProperties.integer(StoreFixture.REDIS_BALLAST_PROPERTY);
        out.printf(
                "ballast per Redis server (Cluster node) of the benchmark's own: %s (-D%s)%n",
                ballast == null ? "sized to the run" : String.format("%,d keys", ballast),
                StoreFixture.REDIS_BALLAST_PROPERTY);
        HttpReport report = run(settings, out, ballast);
        report.print(out);
        if (!report.clean()) {
            System.exit(1);
        }
    }

    /**
     * The keys to write to each server (node) of a Redis of {@code kind} before the run: 2^k + 2^16 for the least
     * 2^k (at least 2^20) that the run's own keys on one server stay under, counting
     * {@value #BALLAST_KEYS_PER_SECOND} keys a second for every second of every phase with fresh keys on that
     * store (more than this machine reaches), a Cluster's spread over its three nodes. A server's tables then hold
     * 2^(k+1) entries and the run does not fill them; 0 for a store that is not Redis.
     */
    static int ballast(Settings settings, StoreKind kind) {
        if (kind != StoreKind.REDIS && kind != StoreKind.REDIS_CLUSTER) {
            return 0;
        }
        long endpoints = settings.variants().stream()
                .filter(v -> v.store().orElse(null) == kind)
                .count();
        double freshShare = settings.mixes().stream()
                .mapToDouble(mix -> mix == Mix.FRESH ? 1.0 : mix == Mix.MIXED ? 0.9 : 0.0)
                .sum();
        long seconds = settings.rounds() * settings.measure().toSeconds()
                + MAX_WARMUP_PASSES * settings.warmup().toSeconds();
        double keys = endpoints
                * freshShare
                * seconds
                * BALLAST_KEYS_PER_SECOND
                / (kind == StoreKind.REDIS_CLUSTER ? StoreFixture.CLUSTER_MASTERS : 1);
        int power = 20;
        while ((1L << power) < keys && power < 28) {
            power++;
        }
        return (1 << power) + (1 << 16);
    }

    /** Runs every phase and returns the report; progress goes to {@code progress}; no ballast. */
    public static HttpReport run(Settings settings, PrintStream progress) throws Exception {
        return run(settings, progress, 0);
    }

    /**
     * Runs every phase and returns the report; progress goes to {@code progress}; {@code ballast} keys are
     * written first to each Redis server (Cluster node) the benchmark starts, or, when null, as many as
     * {@link #ballast} sizes for the run ({@link StoreFixture#REDIS_BALLAST_PROPERTY}).
     */
    public static HttpReport run(Settings settings, PrintStream progress, @Nullable Integer ballast) throws Exception {
        // the profile's directory and the profiler before any store: a directory it cannot take fails the run now,
        // not after minutes of ballast and the stores' start
        CpuProfile profile = CpuProfile.fromSystemProperty().orElse(null);
        Machine before = Machine.sample(InstantSource.system());
        long started = System.nanoTime();
        String run = "h" + Long.toHexString(System.nanoTime());
        Map<StoreKind, StoreFixture> fixtures = new EnumMap<>(StoreKind.class);
        Map<StoreKind, RedisCommandStats> redisStats = new EnumMap<>(StoreKind.class);
        Map<Variant, RenewableMemoryStore> renewable = new EnumMap<>(Variant.class);
        Path work = Files.createTempDirectory("exactly-bench-http");
        try {
            Wrk wrk = Wrk.create(work);
            Map<Variant, BenchServer.Endpoint> endpoints = new EnumMap<>(Variant.class);
            for (Variant variant : settings.variants()) {
                StoreFixture fixture = variant.store()
                        .map(kind -> fixtures.computeIfAbsent(
                                kind,
                                k -> StoreFixture.open(
                                        k, STORE_CONNECTIONS, ballast != null ? ballast : ballast(settings, k))))
                        .orElse(null);
                if (fixture != null && !fixture.redisNodes().isEmpty()) {
                    redisStats.computeIfAbsent(fixture.kind(), k -> new RedisCommandStats(fixture.redisNodes()));
                }
                if (variant.role() == Variant.Role.GUARDED && fixture != null && fixture.kind() == StoreKind.MEMORY) {
                    renewable.put(
                            variant, new RenewableMemoryStore(InstantSource.system(), StoreFixture.MEMORY_MAX_ENTRIES));
                }
                endpoints.put(variant, endpoint(variant, fixture, renewable.get(variant)));
            }
            try (BenchServer server = BenchServer.start(endpoints)) {
                progress.printf("stores and server ready in %d ms%n", (System.nanoTime() - started) / 1_000_000);
                Phases phases = new Phases(settings, server, wrk, work, run, redisStats, renewable, profile, progress);
                return phases.runAll(before);
            }
        } finally {
            redisStats.values().forEach(RedisCommandStats::close);
            List<StoreFixture> open = new ArrayList<>(fixtures.values());
            for (StoreFixture fixture : open.reversed()) {
                fixture.close();
            }
            deleteTree(work);
        }
    }

    /** {@code memory}: the engine on a store of its own that the phases renew (the fixture's stays unused). */
    private static BenchServer.Endpoint endpoint(
            Variant variant, @Nullable StoreFixture fixture, @Nullable RenewableMemoryStore memory) {
        Executions executions = new Executions(variant.runsOncePerKey());
        return switch (variant.role()) {
            case UNGUARDED -> new BenchServer.Endpoint(null, new ChargeServlet(executions), executions);
            case GUARDED ->
                new BenchServer.Endpoint(
                        IdempotencyFilter.builder(
                                        memory != null
                                                ? IdempotencyEngine.builder(memory)
                                                        .build()
                                                : required(fixture, variant).engine())
                                .route(IdempotentRoute.builder("POST", "/v1/charges")
                                        .policy(ROUTE_POLICY)
                                        .build())
                                .tenantResolver(TenantResolver.single("bench"))
                                .build(),
                        new ChargeServlet(executions),
                        executions);
            case RAW -> {
                RawBaseline raw = variant.fenced()
                        ? required(fixture, variant).fencedRaw()
                        : required(fixture, variant).raw();
                yield new BenchServer.Endpoint(
                        null,
                        new RawServlet(raw, executions, RawServlet.Kind.FRESH),
                        new RawServlet(raw, executions, RawServlet.Kind.REPLAYS),
                        new RawServlet(raw, executions, RawServlet.Kind.TOLD),
                        executions);
            }
        };
    }

    private static StoreFixture required(@Nullable StoreFixture fixture, Variant variant) {
        if (fixture == null) {
            throw new IllegalStateException(variant.id() + " needs a store");
        }
        return fixture;
    }

    /** The phases of one run, in order: preparation, warm-up, measured rounds. */
    private static final class Phases {
        private final Settings settings;
        private final BenchServer server;
        private final Wrk wrk;
        private final Path work;
        private final String run;
        private final Map<StoreKind, RedisCommandStats> redisStats;
        private final Map<Variant, RenewableMemoryStore> renewable;
        private final @Nullable CpuProfile profile;
        private final PrintStream progress;
        private final Map<Mix, Map<Variant, Profiled>> profiled = new EnumMap<>(Mix.class);
        private final List<PhaseResult> measured = new ArrayList<>();
        private final List<String> loads = new ArrayList<>();
        private final List<String> otherErrors = new ArrayList<>();
        private long otherErrorCount;
        private int phase;

        Phases(
                Settings settings,
                BenchServer server,
                Wrk wrk,
                Path work,
                String run,
                Map<StoreKind, RedisCommandStats> redisStats,
                Map<Variant, RenewableMemoryStore> renewable,
                @Nullable CpuProfile profile,
                PrintStream progress) {
            this.settings = settings;
            this.server = server;
            this.wrk = wrk;
            this.work = work;
            this.run = run;
            this.redisStats = redisStats;
            this.renewable = renewable;
            this.profile = profile;
            this.progress = progress;
        }

        HttpReport runAll(Machine before) throws Exception {
            for (Variant variant : settings.variants()) {
                prepare(variant);
            }
            // passes over every endpoint and mix until the JIT compiled for less than SETTLED_JIT_SHARE of a
            // pass: a fixed warm-up of a few seconds each left it compiling into the first measured phase,
            // which was then the slowest of its endpoint's in every run of 12-04, whichever endpoint it was
            for (int pass = 1; !settings.warmup().isZero(); pass++) {
                long compiledBefore = compilationMillis();
                long passStart = System.nanoTime();
                for (Mix mix : settings.mixes()) {
                    for (Variant variant : settings.variants()) {
                        PhaseResult result = phase(variant, mix, 0, settings.warmup());
                        progress.printf(
                                "warm-up  %-12s %-20s %9.0f req/s, %d errors%n",
                                mix.title(), variant.name(mix), result.rate(), result.errors());
                        other(result);
                    }
                }
                long compiled = compilationMillis();
                if (compiledBefore < 0 || compiled < 0) {
                    break;
                }
                double share = (compiled - compiledBefore) / ((System.nanoTime() - passStart) / 1e6);
                progress.printf("warm-up pass %d: the JIT compiled for %.1f %% of it%n", pass, 100 * share);
                if (share < SETTLED_JIT_SHARE || pass == MAX_WARMUP_PASSES) {
                    break;
                }
            }
            for (int round = 1; round <= settings.rounds(); round++) {
                loads.add("round " + round + ": "
                        + Machine.sample(InstantSource.system()).loadAverage());
                // odd rounds in the given order, even rounds reversed: each guarded endpoint next to its floor,
                // after it in one round and before it in the next, so that neither side of a ratio is always
                // the one that runs on what the other left behind (its garbage, its keys expiring)
                List<Variant> order = round % 2 == 1
                        ? settings.variants()
                        : settings.variants().reversed();
                for (Mix mix : settings.mixes()) {
                    for (Variant variant : order) {
                        long compiledBefore = compilationMillis();
                        PhaseResult result = phase(variant, mix, round, settings.measure());
                        long compiled = compilationMillis() - compiledBefore;
                        progress.printf(
                                "round %d  %-12s %-20s %9.0f req/s, %d errors%s%n",
                                round,
                                mix.title(),
                                variant.name(mix),
                                result.rate(),
                                result.errors(),
                                compiledBefore < 0 ? "" : ", JIT " + compiled + " ms");
                        measured.add(result);
                    }
                }
            }
            if (profile != null) {
                printProfiles(profile);
            }
            return new HttpReport(
                    settings,
                    before,
                    Machine.sample(InstantSource.system()),
                    measured,
                    loads,
                    otherErrorCount,
                    otherErrors);
        }

        /** The samples of one endpoint's measured phases of one mix, and the requests they answered. */
        private record Profiled(CpuProfile.Stacks stacks, long requests) {
            Profiled plus(CpuProfile.Stacks more, long moreRequests) {
                return new Profiled(stacks.plus(more), requests + moreRequests);
            }
        }

        /** Writes each endpoint's stacks and prints, per guarded endpoint, the frames that moved against its floor. */
        private void printProfiles(CpuProfile profile) throws IOException {
            progress.printf(
                    "%nCPU profile of the measured phases (one sample per ms of the JVM's CPU time), in %s%n",
                    profile.directory());
            for (Map.Entry<Mix, Map<Variant, Profiled>> byMix : profiled.entrySet()) {
                Mix mix = byMix.getKey();
                Map<Variant, Profiled> byVariant = byMix.getValue();
                for (Map.Entry<Variant, Profiled> entry : byVariant.entrySet()) {
                    Variant variant = entry.getKey();
                    Profiled p = entry.getValue();
                    Path file = profile.directory().resolve(mix.mode() + "-" + variant.name(mix) + ".collapsed");
                    p.stacks().write(file);
                    progress.printf(
                            "  %-12s %-20s %8.1f µs of CPU per request (%d samples, %d requests): %s%n",
                            mix.title(),
                            variant.name(mix),
                            CpuProfile.micros(p.stacks().total(), p.requests()),
                            p.stacks().total(),
                            p.requests(),
                            file.getFileName());
                }
                for (Variant variant : byVariant.keySet()) {
                    List<Variant> floors = new ArrayList<>();
                    variant.floor().filter(byVariant::containsKey).ifPresent(floors::add);
                    variant.fencedFloor().filter(byVariant::containsKey).ifPresent(floors::add);
                    for (Variant floor : floors) {
                        printMoved(
                                mix,
                                variant,
                                Objects.requireNonNull(byVariant.get(variant), "a key"),
                                floor,
                                Objects.requireNonNull(byVariant.get(floor), "kept above"));
                    }
                }
            }
        }

        private void printMoved(Mix mix, Variant variant, Profiled guarded, Variant floor, Profiled base) {
            progress.printf(
                    "%n%s, %s against %s: self time per request by frame, µs (the largest differences)%n",
                    mix.title(), variant.name(mix), floor.name(mix));
            progress.printf("  %9s %9s %9s  %s%n", floor.name(mix), variant.name(mix), "moved", "frame");
            for (CpuProfile.FrameDelta row : CpuProfile.moved(
                    base.stacks(), base.requests(), guarded.stacks(), guarded.requests(), MOVED_FRAMES)) {
                progress.printf(
                        "  %9.2f %9.2f %+9.2f  %s%n", row.floorMicros(), row.guardedMicros(), row.delta(), row.frame());
            }
        }

        private void other(PhaseResult result) {
            otherErrorCount += result.errors();
            result.errorSamples().stream()
                    .limit(Math.max(0, 10 - otherErrors.size()))
                    .forEach(sample -> otherErrors.add(result.variant().name(result.mix()) + " warm-up: " + sample));
        }

        /** Completes the replay keys of {@code variant} and writes them, with their answers, for the load script. */
        private void prepare(Variant variant) throws Exception {
            long start = System.nanoTime();
            URI uri = server.uri(variant, Mix.FRESH);
            List<String> keys = new ArrayList<>(settings.replayKeys());
            SplittableRandom random = new SplittableRandom();
            for (int i = 0; i < settings.replayKeys(); i++) {
                keys.add(settings.keys().key(run + "-replay-" + variant.id() + "-" + i, random));
            }
            List<String> bodies = new ArrayList<>(keys.size());
            RenewableMemoryStore memory = renewable.get(variant);
            if (memory != null) {
                memory.keepCompletedDuring(() -> complete(uri, keys, bodies));
            } else {
                complete(uri, keys, bodies);
            }
            try (BufferedWriter out = Files.newBufferedWriter(keyFile(variant), StandardCharsets.UTF_8)) {
                for (int i = 0; i < keys.size(); i++) {
                    out.write(keys.get(i) + "\t" + bodies.get(i) + "\n");
                }
            }
            progress.printf(
                    "prepared %d replay keys of %-18s in %d ms%n",
                    keys.size(), variant.id(), (System.nanoTime() - start) / 1_000_000);
        }

        /** Sends each key once, from a few clients at a time, and adds the answers' bodies to {@code bodies}. */
        private static void complete(URI uri, List<String> keys, List<String> bodies) throws Exception {
            try (HttpClient client = HttpClient.newBuilder()
                            .version(HttpClient.Version.HTTP_1_1)
                            .build();
                    ExecutorService clients = Executors.newFixedThreadPool(PREPARE_CLIENTS)) {
                List<Future<String>> answers = new ArrayList<>(keys.size());
                for (String key : keys) {
                    answers.add(clients.submit(() -> send(client, uri, key)));
                }
                for (int i = 0; i < keys.size(); i++) {
                    bodies.add(answers.get(i).get());
                }
            }
        }

        private static String send(HttpClient client, URI uri, String key) throws IOException, InterruptedException {
            HttpRequest request = HttpRequest.newBuilder(uri)
                    .header("Content-Type", "application/json")
                    .header(IdempotencyFilter.KEY_HEADER, key)
                    .POST(HttpRequest.BodyPublishers.ofString(
                            "{\"amount\":1999,\"currency\":\"EUR\",\"reference\":\"" + key + "\"}"))
                    .build();
            HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
            String body = response.body();
            if (response.statusCode() != 201
                    || !body.contains("\"reference\":\"" + key + "\"")
                    || response.headers()
                            .firstValue(IdempotencyFilter.REPLAYED_HEADER)
                            .isPresent()
                    || body.indexOf('\n') >= 0
                    || body.indexOf('\t') >= 0) {
                throw new IllegalStateException("preparing " + key + ": " + response.statusCode() + " " + body);
            }
            return body;
        }

        private Path keyFile(Variant variant) {
            return work.resolve(variant.id() + ".keys");
        }

        /** One wrk run against one endpoint, with the execution and Redis accounts around it. */
        private PhaseResult phase(Variant variant, Mix mix, int round, Duration duration) throws Exception {
            // the garbage of the phase before is collected now, not by the collector's threads during this one,
            // whose CPU time and pauses would be charged to this endpoint (the one after the in-memory endpoint's
            // fast phase paid for its garbage, and looked slower than what it does)
            RenewableMemoryStore memory = renewable.get(variant);
            if (memory != null) {
                memory.renew(); // the fresh keys of its phases before go, the replay keys stay
            }
            System.gc();
            Executions executions = server.executions(variant);
            long executionsBefore = executions.count();
            long duplicatesBefore = executions.duplicates();
            RedisCommandStats stats = variant.store().map(redisStats::get).orElse(null);
            Map<String, RedisCommandStats.Stat> redisBefore = stats == null ? null : stats.snapshot();
            long redisCpuBefore = stats == null ? 0 : stats.cpuMicros();
            String tag = run + "-p" + phase++;
            boolean onPostgres =
                    variant.store().filter(StoreKind.POSTGRES::equals).isPresent();
            Optional<ProcessCpu.Snapshot> postgresBefore = onPostgres ? ProcessCpu.snapshot() : Optional.empty();
            CpuProfile profiling = round > 0 ? profile : null; // the warm-up is not sampled
            if (profiling != null) {
                profiling.start();
            }
            long cpuBefore = processCpuNanos();
            Wrk.Report report = wrk.run(
                    server.uri(variant, mix),
                    mix,
                    tag,
                    settings.keys(),
                    variant.marksReplays(),
                    keyFile(variant),
                    settings.threads(),
                    settings.connections(),
                    duration);
            await("requests of " + tag + " finished")
                    .atMost(IDLE_TIMEOUT)
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> server.inProgress() == 0);
            long cpu = processCpuNanos() - cpuBefore;
            if (profiling != null) {
                CpuProfile.Stacks stacks = profiling.stop();
                profiled.computeIfAbsent(mix, m -> new EnumMap<>(Variant.class))
                        .merge(
                                variant,
                                new Profiled(stacks, report.responses()),
                                (had, more) -> had.plus(more.stacks(), more.requests()));
            }
            Optional<ProcessCpu.Snapshot> postgresAfter =
                    postgresBefore.isPresent() ? ProcessCpu.snapshot() : Optional.empty();
            OptionalLong postgresCpu = postgresBefore.isPresent() && postgresAfter.isPresent()
                    ? OptionalLong.of(ProcessCpu.micros(postgresBefore.get(), postgresAfter.get(), "postgres"))
                    : OptionalLong.empty();
            long ran = executions.count() - executionsBefore;
            RedisCommandStats.Delta redis = stats == null || redisBefore == null
                    ? null
                    : RedisCommandStats.between(redisBefore, stats.snapshot(), stats.cpuMicros() - redisCpuBefore);

            List<String> samples = new ArrayList<>(report.errorSamples());
            long errors = report.failed() + report.socketErrors();
            long answered = report.responses() - report.failed();
            if (mix == Mix.REPLAYS && variant.runsOncePerKey()) {
                if (ran != 0) {
                    errors += ran;
                    samples.add("the handler ran " + ran + " times for keys that were completed before");
                }
            } else if (mix == Mix.MIXED && variant.runsOncePerKey()) {
                // every good fresh answer is an execution, a replay none (a replay key that ran again is a
                // duplicate, below); at most one request per connection was cut off unanswered
                if (ran < report.freshAnswers() || ran > report.freshAnswers() + settings.connections()) {
                    errors++;
                    samples.add("the handler ran " + ran + " times for " + report.freshAnswers()
                            + " good answers to fresh keys");
                }
            } else if (ran < answered || ran > report.responses() + settings.connections()) {
                // every good answer is an execution; at most one request per connection was cut off unanswered
                errors++;
                samples.add("the handler ran " + ran + " times for " + report.responses() + " answers (" + answered
                        + " good)");
            }
            long duplicates = executions.duplicates() - duplicatesBefore;
            if (duplicates > 0) {
                errors += duplicates;
                samples.add(duplicates + " keys ran the handler twice, e.g. " + executions.duplicateSamples());
            }
            return new PhaseResult(
                    variant,
                    mix,
                    round,
                    report.responses(),
                    errors,
                    report.seconds(),
                    report.p50Millis(),
                    report.p99Millis(),
                    ran,
                    redis,
                    cpu,
                    postgresCpu,
                    samples);
        }
    }

    /**
     * The time this JVM's JIT compilers have spent compiling so far (the sum over its compiler threads), or -1
     * where the JVM does not tell.
     */
    static long compilationMillis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    /**
     * CPU time of this JVM, which serves every endpoint: per answer, the server's own cost, which the load of
     * other processes on the machine stretches far less than it does a rate.
     */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path path : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
