package dev.exactly.benchmarks.payments;

import static org.awaitility.Awaitility.await;

import dev.exactly.testing.ProcessCpu;
import dev.exactly.testing.SystemProperties;
import dev.exactly.testing.TestPostgres;
import dev.exactly.testing.TestRedis;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The payments benchmark: the payment service's executable jar started as a process the way it is
 * deployed ({@code DATABASE_URL} on PostgreSQL in a fresh schema, {@code REDIS_URL} with a key prefix of
 * the run, {@code API_KEYS}, the in-process processor stand-in without latency), {@code POST /v1/charges}
 * driven by wrk with a fresh {@code Idempotency-Key} per request over the run's customers, every answer
 * checked (201, a succeeded charge with its id; anything else fails the run), and the books checked
 * afterwards: succeeded charges = processor captures = journal entries, every answered charge present,
 * nothing left pending, the trial balance balanced. As the physical reference, pgbench commits single-row
 * {@code INSERT ... ON CONFLICT} transactions on the same server (16 connections by default), right before and
 * right after the measured phase. The work per charge, which the machine's load does not change, is counted
 * too: the service JVM's CPU time (and the part its JIT compiler threads took) and its socket writes to
 * PostgreSQL, Redis and the processor over the measured phase ({@link RoundTrips}, a flight recording of
 * {@code jdk.SocketWrite} alone).
 *
 * <pre>
 * benchmarks/payments-benchmark.sh      # installs wrk and pgbench if missing, builds, runs
 * </pre>
 *
 * Options (system properties): {@code -Dexactly.bench.threads=2 -Dexactly.bench.connections=32
 * -Dexactly.bench.warmup=15 -Dexactly.bench.warmupCharges=6000 -Dexactly.bench.seconds=20 -Dexactly.bench.customers=1000
 * -Dexactly.bench.pgbench=5} (seconds per pgbench run; 0 skips it), {@code -Dexactly.bench.pgbenchClients=16}, {@code -Dexactly.bench.jfr=charges.jfr}
 * (a JDK Flight Recorder recording of the service over the measured phase, profile settings and CPU-time samples),
 * {@code -Dexactly.bench.jvm="-Xms1g -Xmx1g"} (the service's JVM options),
 * {@code -Dexactly.bench.jar=payments-service/target/payments-service.jar},
 * {@code -Dexactly.bench.args="--exactly.payments.pool-size=16"} (the service's Spring properties).
 */
public final class PaymentsBenchmark {
    private static final long AMOUNT = 1999;
    private static final int MAX_WARMUP_ROUNDS = 8;
    /** The warm-up ends once the JIT compiler threads took less than this share of the service's CPU in a round. */
    private static final double SETTLED_JIT_SHARE = 0.05;

    private static final Duration START_TIMEOUT = Duration.ofMinutes(3);
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(60);

    private PaymentsBenchmark() {}

    /** {@code part} of {@code whole}; 1 where either is unknown (negative) or the whole is zero. */
    private static double share(long part, long whole) {
        return part < 0 || whole <= 0 ? 1 : (double) part / whole;
    }

    /**
     * How to run.
     *
     * @param threads     load generator threads ({@code wrk -t})
     * @param connections concurrent keep-alive connections, one request in flight on each ({@code wrk -c})
     * @param warmup      one warm-up round, whole seconds (the service's JIT compiles meanwhile); zero skips
     * @param warmupCharges warm-up rounds follow each other until this many charges were made and the JIT
     *                    compiler threads took less than {@value #SETTLED_JIT_SHARE} of the service's CPU in the
     *                    last round (at most {@value #MAX_WARMUP_ROUNDS} rounds): a loaded machine compiles the
     *                    hot code later
     * @param measure     the measured phase, whole seconds
     * @param customers   charges go round-robin to this many customers (each a ledger account)
     * @param pgbench     each pgbench run; zero skips the reference
     * @param pgbenchClients pgbench's connections (the server's connection limit is shared with other users)
     * @param jar         the service's executable jar
     * @param jvmOptions  the service's JVM options
     * @param jfr         where to write a flight recording of the measured phase, or {@code null} for none
     * @param serviceArguments Spring properties for the service ({@code --name=value}), after the benchmark's own
     */
    public record Settings(
            int threads,
            int connections,
            Duration warmup,
            int warmupCharges,
            Duration measure,
            int customers,
            Duration pgbench,
            int pgbenchClients,
            Path jar,
            List<String> jvmOptions,
            @Nullable Path jfr,
            List<String> serviceArguments) {

        public Settings {
            jvmOptions = List.copyOf(jvmOptions);
            serviceArguments = List.copyOf(serviceArguments);
            if (threads < 1 || connections < threads || customers < 1 || pgbenchClients < threads) {
                throw new IllegalArgumentException("threads (" + threads + ") and customers (" + customers
                        + ") must be positive, connections (" + connections + ") and pgbenchClients (" + pgbenchClients
                        + ") at least threads");
            }
            if (measure.toSeconds() < 1
                    || warmup.isNegative()
                    || pgbench.isNegative()
                    || measure.toMillis() % 1000 != 0
                    || warmup.toMillis() % 1000 != 0
                    || pgbench.toMillis() % 1000 != 0) {
                throw new IllegalArgumentException("wrk and pgbench time whole seconds: measure at least 1 s ("
                        + measure.toSeconds() + " s), warm-up and pgbench 0 s or more (" + warmup.toSeconds() + " s, "
                        + pgbench.toSeconds() + " s)");
            }
        }

        /** wrk -t2 -c32, 15 s warm-up, 20 s measured, 1000 customers, 5 s pgbench with 16 clients, a 1 GB heap. */
        public static Settings defaults(Path jar) {
            return new Settings(
                    2,
                    32,
                    Duration.ofSeconds(15),
                    6000,
                    Duration.ofSeconds(20),
                    1000,
                    Duration.ofSeconds(5),
                    16,
                    jar,
                    List.of("-Xms1g", "-Xmx1g"),
                    null,
                    List.of());
        }

        static Settings fromSystemProperties() {
            Path root = Path.of(System.getProperty("exactly.repo.root", "."));
            Settings d = defaults(root.resolve(
                    System.getProperty("exactly.bench.jar", "payments-service/target/payments-service.jar")));
            String jvm = System.getProperty("exactly.bench.jvm");
            String jfr = System.getProperty("exactly.bench.jfr");
            String arguments = System.getProperty("exactly.bench.args", "");
            return new Settings(
                    SystemProperties.integer("exactly.bench.threads", d.threads()),
                    SystemProperties.integer("exactly.bench.connections", d.connections()),
                    SystemProperties.seconds("exactly.bench.warmup", d.warmup()),
                    SystemProperties.integer("exactly.bench.warmupCharges", d.warmupCharges()),
                    SystemProperties.seconds("exactly.bench.seconds", d.measure()),
                    SystemProperties.integer("exactly.bench.customers", d.customers()),
                    SystemProperties.seconds("exactly.bench.pgbench", d.pgbench()),
                    SystemProperties.integer("exactly.bench.pgbenchClients", d.pgbenchClients()),
                    d.jar(),
                    jvm == null
                            ? d.jvmOptions()
                            : Arrays.stream(jvm.strip().split("\\s+"))
                                    .filter(s -> !s.isEmpty())
                                    .toList(),
                    jfr == null || jfr.isBlank() ? null : Path.of(jfr).toAbsolutePath(),
                    Arrays.stream(arguments.strip().split("\\s+"))
                            .filter(s -> !s.isEmpty())
                            .toList());
        }
    }

    /**
     * What one run measured and found.
     *
     * @param warmedUp   the charges of the warm-up rounds
     * @param measured   the measured phase
     * @param pgbench    pgbench's commits per second before and after the measured phase (empty when skipped)
     * @param books      the books afterwards
     * @param cpuMillis  the CPU time the service's JVM used over the measured phase, or -1 when unknown
     * @param compilerMillis the part of it its JIT compiler threads used, or -1 when unknown
     * @param roundTrips the service JVM's socket writes to PostgreSQL, Redis and the processor over the
     *                   measured phase, or {@code null} when they could not be recorded
     * @param machine    where the machine's CPU time went over the measured phase, or {@code null} without
     *                   {@code /proc}
     * @param wal        the database server's WAL over the measured phase, or {@code null} when it has no
     *                   {@code pg_stat_wal}
     * @param problems   every failed check: empty for a clean run
     * @param loads      the machine's load averages at the start, before and after the measured phase
     */
    public record Result(
            Settings settings,
            long warmedUp,
            ChargesWrk.Report measured,
            List<Double> pgbench,
            Books books,
            long cpuMillis,
            long compilerMillis,
            @Nullable RoundTrips roundTrips,
            @Nullable MachineTime machine,
            @Nullable WalStats wal,
            List<String> problems,
            Map<String, String> loads) {

        public Result {
            pgbench = List.copyOf(pgbench);
            problems = List.copyOf(problems);
            loads = Map.copyOf(new LinkedHashMap<>(loads));
        }

        public boolean clean() {
            return problems.isEmpty();
        }

        public double chargesPerSecond() {
            return measured.rate();
        }

        public void print(PrintStream out) {
            ChargesWrk.Report m = measured;
            out.println();
            out.printf(
                    "Payments benchmark: POST /v1/charges, wrk -t%d -c%d, %d s measured after %d warm-up charges, %d"
                            + " customers, fresh key per request%n",
                    settings.threads(),
                    settings.connections(),
                    settings.measure().toSeconds(),
                    warmedUp,
                    settings.customers());
            out.printf(
                    "machine: %d cores; load average %s%n",
                    Runtime.getRuntime().availableProcessors(),
                    String.join(
                            "; ",
                            loads.entrySet().stream()
                                    .sorted(Map.Entry.comparingByKey())
                                    .map(e -> e.getKey() + " " + e.getValue())
                                    .toList()));
            out.printf(
                    "  charges/s         %10.0f   (%d good answers in %.1f s, %d errors)%n",
                    m.rate(), m.good(), m.seconds(), m.errors());
            if (cpuMillis >= 0 && m.good() > 0) {
                out.printf(
                        "  service CPU       %10.2f ms per charge (%d ms over the measured phase)%n",
                        (double) cpuMillis / m.good(), cpuMillis);
                if (compilerMillis >= 0) {
                    out.printf(
                            "    without the JIT %10.2f ms per charge (its compiler threads: %d ms)%n",
                            (double) (cpuMillis - compilerMillis) / m.good(), compilerMillis);
                }
            }
            if (machine != null && cpuMillis >= 0 && m.good() > 0) {
                machine.print(out, cpuMillis, m.good());
            }
            out.printf(
                    "  latency ms        p50 %.1f   p90 %.1f   p99 %.1f   max %.1f%n",
                    m.p50Millis(), m.p90Millis(), m.p99Millis(), m.maxMillis());
            if (roundTrips != null) {
                out.printf(
                        "  socket writes per charge: %s (one per round trip to PostgreSQL; to Redis, commands waiting together share one)%n",
                        roundTrips.perCharge(m.good()));
            }
            if (wal != null && m.good() > 0) {
                out.printf("  WAL               %s%n", wal.perCharge(m.good()));
            }
            if (!pgbench.isEmpty()) {
                double mean = pgbench.stream()
                        .mapToDouble(Double::doubleValue)
                        .average()
                        .orElse(0);
                out.printf(
                        "  pgbench commits/s %10.0f   (single-row INSERT ... ON CONFLICT, -c%d; before, after: %s)%n",
                        mean,
                        settings.pgbenchClients(),
                        pgbench.stream().map(v -> String.format("%.0f", v)).toList());
                out.printf("  charges per pgbench commit: %.3f%n", m.rate() / mean);
            }
            out.printf(
                    "  books: %d succeeded charges to %d customers, %d processor captures, %d journal entries,"
                            + " trial balance %s%n",
                    books.succeeded(), books.customers(), books.captures(), books.chargeEntries(), trial());
            if (problems.isEmpty()) {
                out.println(
                        "every answer passed its checks; one charge = one capture = one journal entry; ledger balanced");
            } else {
                out.println("FAILED:");
                problems.forEach(p -> out.println("  " + p));
            }
        }

        private String trial() {
            List<String> parts = new ArrayList<>();
            books.trialBalance()
                    .forEach((currency, sides) -> parts.add(currency + " debits " + sides[0] + " = credits " + sides[1]
                            + (sides[0] == sides[1] ? "" : " (OFF)")));
            return parts.isEmpty() ? "empty" : String.join(", ", parts);
        }
    }

    /**
     * Where the machine's CPU time went over the measured phase, from {@code /proc}: the whole machine's busy
     * time, and the parts of it that the PostgreSQL server's processes, Redis and wrk used (the service's own
     * part is measured in its JVM). Everything runs on this one machine, so a charge costs it the sum; the
     * rest is the kernel's work outside those processes (interrupts, writeback) and everything else running.
     *
     * @param busyMicros     the machine's busy CPU time, summed over its cores
     * @param busyShare      the share of the machine's CPU time that was busy
     * @param postgresMicros every {@code postgres} process (backends, WAL writer, checkpointer)
     * @param redisMicros    every {@code redis-server}
     * @param wrkMicros      the load generator (a child of the benchmark's JVM that runs through the phase)
     */
    public record MachineTime(
            long busyMicros, double busyShare, long postgresMicros, long redisMicros, long wrkMicros) {
        static MachineTime between(ProcessCpu.Snapshot before, ProcessCpu.Snapshot after) {
            return new MachineTime(
                    ProcessCpu.machineBusyMicros(before, after),
                    ProcessCpu.machineBusyShare(before, after),
                    ProcessCpu.micros(before, after, "postgres"),
                    ProcessCpu.micros(before, after, "redis-server"),
                    ProcessCpu.micros(before, after, "wrk") + ProcessCpu.endedChildrenMicros(before, after));
        }

        void print(PrintStream out, long serviceMillis, long charges) {
            double service = serviceMillis * 1000.0;
            double rest = Math.max(0, busyMicros - postgresMicros - redisMicros - wrkMicros - service);
            out.printf(
                    "  machine CPU       %10.2f ms per charge (busy %.0f %% of the measured phase): PostgreSQL %.2f,"
                            + " the service %.2f, Redis %.2f, wrk %.2f, the rest %.2f%n",
                    busyMicros / 1000.0 / charges,
                    100 * busyShare,
                    postgresMicros / 1000.0 / charges,
                    service / 1000.0 / charges,
                    redisMicros / 1000.0 / charges,
                    wrkMicros / 1000.0 / charges,
                    rest / 1000.0 / charges);
        }
    }

    public static void main(String[] args) throws Exception {
        Settings settings = Settings.fromSystemProperties();
        Result result = run(settings, System.out);
        result.print(System.out);
        if (!result.clean()) {
            System.exit(1);
        }
    }

    /** Runs the benchmark; progress goes to {@code progress}. */
    public static Result run(Settings settings, PrintStream progress) throws Exception {
        if (settings.jfr() != null) {
            prepareRecordingPath(settings.jfr());
        }
        if (!Files.isRegularFile(settings.jar())) {
            throw new IllegalStateException(
                    "no service jar at " + settings.jar() + " (./mvnw -pl payments-service -am package -DskipTests)");
        }
        Map<String, String> loads = new LinkedHashMap<>();
        loads.put("1 start", loadAverage());
        String run = "pb" + Long.toHexString(System.nanoTime());
        String jdbcUrl = TestPostgres.jdbcUrl();
        String schema = Objects.requireNonNull(
                ((PGSimpleDataSource) TestPostgres.freshSchema("paybench")).getCurrentSchema(),
                "a fresh schema is its data source's current one");
        // the application name tells the service's sessions apart in pg_stat_activity
        String serviceUrl = jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "currentSchema=" + schema
                + "&ApplicationName=exactly-payments-benchmark";
        Path work = Files.createTempDirectory("exactly-bench-payments");
        try {
            ChargesWrk wrk = ChargesWrk.create(work);
            PgBench pgbench = settings.pgbench().isZero() ? null : PgBench.create(jdbcUrl, schema, work);
            String apiKey = "sk_bench_" + run;
            Map<String, String> environment = Map.of(
                    "DATABASE_URL",
                    serviceUrl,
                    "REDIS_URL",
                    TestRedis.uri(),
                    "API_KEYS",
                    apiKey + "=bench",
                    "OPERATOR_KEY",
                    "sk_bench_operator_" + run,
                    "PSP_URL",
                    "");
            List<String> arguments = new ArrayList<>(List.of(
                    "--exactly.idempotency.redis.key-prefix=exactly-bench:" + run + ":",
                    // the hot tier's records of a run are replayed by nobody after it: let them go soon
                    "--exactly.idempotency.retention=10m"));
            arguments.addAll(settings.serviceArguments());
            long started = System.nanoTime();
            try (ServiceProcess service = ServiceProcess.start(
                    javaBinary(),
                    settings.jar(),
                    settings.jvmOptions(),
                    environment,
                    arguments,
                    TestRedis.freePort(),
                    work.resolve("service.log"),
                    START_TIMEOUT)) {
                progress.printf(
                        "service ready in %d ms (pid %d, schema %s)%n",
                        (System.nanoTime() - started) / 1_000_000, service.pid(), schema);
                URI charges = service.baseUri().resolve("/v1/charges");
                URI processor = service.processor();
                List<String> problems = new ArrayList<>();
                // one charge first, alone: the setup works, and its slow first run stays out of the phases
                HttpResponse<String> first = service.post(
                        charges,
                        "{\"amount\":" + AMOUNT + ",\"currency\":\"usd\",\"customer\":\"cus_0\"}",
                        "Authorization",
                        "Bearer " + apiKey,
                        "Idempotency-Key",
                        run + "-first");
                if (first.statusCode() != 201 || !first.body().startsWith("{\"id\":\"ch_")) {
                    throw new IllegalStateException("the first charge failed: " + first.statusCode() + " "
                            + first.body() + "\n" + service.tail(30));
                }
                long good = 1;
                int phases = 0;
                long warmedUp = 0;
                // the measured phase's recordings, in force from the warm-up on: enabling their events (socket
                // writes, the profile's) deoptimises the code that emits them, and the JIT would recompile the
                // hot paths inside the measured phase (its compiler threads took about a quarter of the
                // service's CPU there)
                Path socketWritesSettings = RoundTrips.settingsFile(work);
                jcmd(service.pid(), "JFR.start", "name=warm-socket-writes", "settings=" + socketWritesSettings);
                if (settings.jfr() != null) {
                    jcmd(service.pid(), concat("JFR.start", "name=warm-bench", PROFILE));
                }
                // warm until the JIT has settled too, not only after a number of charges: much of a charge's
                // code is compiled by C2 only after some thousand calls, and on two busy cores its compilation
                // went on into the measured phase (its compiler threads took 5.1 of the service's 18.2 s of CPU)
                boolean warm = settings.warmup().isZero();
                for (int round = 0; !warm && round < MAX_WARMUP_ROUNDS; round++) {
                    long roundCpu = service.cpuMillis();
                    long roundCompiler = service.compilerCpuMillis();
                    ChargesWrk.Report warmup = wrk.run(
                            charges,
                            run + "-w" + round,
                            apiKey,
                            settings.customers(),
                            AMOUNT,
                            settings.threads(),
                            settings.connections(),
                            settings.warmup());
                    double compiling =
                            share(service.compilerCpuMillis() - roundCompiler, service.cpuMillis() - roundCpu);
                    progress.printf(
                            "warm-up   %8.0f charges/s, p99 %.1f ms, %d errors, JIT %.0f %% of the service's CPU%n",
                            warmup.rate(), warmup.p99Millis(), warmup.errors(), compiling * 100);
                    warmedUp += warmup.good();
                    warm = warmedUp >= settings.warmupCharges() && compiling < SETTLED_JIT_SHARE;
                    good += warmup.good();
                    phases++;
                    check("warm-up", warmup, problems);
                }
                List<Double> commits = new ArrayList<>();
                if (pgbench != null) {
                    commits.add(pgbench.run(settings.threads(), settings.pgbenchClients(), settings.pgbench()));
                    progress.printf("pgbench   %8.0f commits/s%n", commits.getLast());
                }
                loads.put("2 measured phase", loadAverage());
                if (settings.jfr() != null) {
                    jcmd(service.pid(), concat("JFR.start", "name=bench", PROFILE));
                    jcmd(service.pid(), "JFR.stop", "name=warm-bench");
                }
                Path socketWrites = work.resolve("socket-writes.jfr");
                jcmd(service.pid(), "JFR.start", "name=socket-writes", "settings=" + socketWritesSettings);
                jcmd(service.pid(), "JFR.stop", "name=warm-socket-writes");
                long cpuBefore = service.cpuMillis();
                long compilerBefore = service.compilerCpuMillis();
                Optional<ProcessCpu.Snapshot> machineBefore = ProcessCpu.snapshot();
                Optional<WalStats> walBefore = WalStats.read(jdbcUrl);
                ChargesWrk.Report measured = wrk.run(
                        charges,
                        run + "-m",
                        apiKey,
                        settings.customers(),
                        AMOUNT,
                        settings.threads(),
                        settings.connections(),
                        settings.measure());
                long cpuAfter = service.cpuMillis();
                long compilerAfter = service.compilerCpuMillis();
                Optional<ProcessCpu.Snapshot> machineAfter = ProcessCpu.snapshot();
                Optional<WalStats> walAfter = WalStats.read(jdbcUrl);
                jcmd(service.pid(), "JFR.stop", "name=socket-writes", "filename=" + socketWrites);
                RoundTrips roundTrips =
                        roundTrips(socketWrites, jdbcUrl, service.processor().getPort(), progress);
                if (settings.jfr() != null) {
                    String said = jcmd(service.pid(), "JFR.stop", "name=bench", "filename=" + settings.jfr());
                    if (Files.isRegularFile(settings.jfr()) && Files.size(settings.jfr()) > 0) {
                        progress.printf("flight recording of the measured phase: %s%n", settings.jfr());
                    } else {
                        // jcmd exits 0 when the service cannot write the recording: its answer says why
                        progress.printf(
                                "flight recording of the measured phase NOT written to %s: %s%n",
                                settings.jfr(), said.strip());
                    }
                }
                loads.put("3 after", loadAverage());
                progress.printf(
                        "measured  %8.0f charges/s, p50 %.1f ms, p99 %.1f ms, %d errors%n",
                        measured.rate(), measured.p50Millis(), measured.p99Millis(), measured.errors());
                good += measured.good();
                phases++;
                check("measured", measured, problems);
                if (pgbench != null) {
                    commits.add(pgbench.run(settings.threads(), settings.pgbenchClients(), settings.pgbench()));
                    progress.printf("pgbench   %8.0f commits/s%n", commits.getLast());
                }
                await("charges of the run finished")
                        .atMost(DRAIN_TIMEOUT)
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> Books.pending(jdbcUrl, schema) == 0);
                Books books = Books.read(jdbcUrl, schema, service.get(processor.resolve("/v1/stats"), ""));
                problems.addAll(books.problems(good, (long) phases * settings.connections(), settings.customers()));
                if (!problems.isEmpty()) {
                    progress.println("service log (tail):\n" + service.tail(30));
                }
                return new Result(
                        settings,
                        warmedUp,
                        measured,
                        commits,
                        books,
                        cpuBefore < 0 || cpuAfter < 0 ? -1 : cpuAfter - cpuBefore,
                        compilerBefore < 0 || compilerAfter < 0 ? -1 : compilerAfter - compilerBefore,
                        roundTrips,
                        machineBefore.isPresent() && machineAfter.isPresent()
                                ? MachineTime.between(machineBefore.get(), machineAfter.get())
                                : null,
                        walBefore.isPresent() && walAfter.isPresent()
                                ? walAfter.get().since(walBefore.get())
                                : null,
                        problems,
                        loads);
            }
        } finally {
            dropSchema(jdbcUrl, schema);
            deleteTree(work);
        }
    }

    private static void check(String phase, ChargesWrk.Report report, List<String> problems) {
        if (report.errors() > 0) {
            problems.add(phase + ": " + report.failed() + " answers failed their checks, " + report.socketErrors()
                    + " socket errors: " + report.errorSamples());
        }
        if (report.good() == 0) {
            problems.add(phase + ": no good answer");
        }
    }

    /** The counts of the socket writes' recording, or {@code null} (said on {@code progress}) if unreadable. */
    private static @Nullable RoundTrips roundTrips(
            Path recording, String jdbcUrl, int processorPort, PrintStream progress) {
        try {
            int port = URI.create(jdbcUrl.substring("jdbc:".length())).getPort();
            return RoundTrips.read(recording, port < 0 ? 5432 : port, TestRedis.port(), processorPort);
        } catch (IOException | RuntimeException e) {
            progress.printf("socket writes not counted: %s%n", e);
            return null;
        }
    }

    private static Path javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /**
     * The profile recording's settings: JDK Flight Recorder's {@code profile}, and CPU-time samples (Linux:
     * one per millisecond of a thread's CPU) besides the execution samples, which a busy machine starves.
     */
    private static final String[] PROFILE = {
        "settings=profile", "jdk.CPUTimeSample#enabled=true", "jdk.CPUTimeSample#throttle=1ms"
    };

    private static String[] concat(String command, String name, String... options) {
        List<String> all = new ArrayList<>(List.of(command, name));
        all.addAll(List.of(options));
        return all.toArray(String[]::new);
    }

    /**
     * Makes the flight recording's directory before any load, so that a path the recording cannot take (its
     * directory a file, or not writable, or the path itself a directory) fails the run now, not at its end, when
     * the service is told to write the recording and the measured phase would be lost; and removes an earlier
     * recording at the path, so that a file found there after the run is this run's.
     *
     * @throws IllegalArgumentException naming {@code -Dexactly.bench.jfr} and why
     */
    static void prepareRecordingPath(Path jfr) {
        String named = "-Dexactly.bench.jfr=" + jfr;
        if (Files.isDirectory(jfr)) {
            throw new IllegalArgumentException(named + " is a directory: name the recording's file");
        }
        Path directory = jfr.toAbsolutePath().getParent();
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new IllegalArgumentException(named + ": cannot create its directory (" + e + ")", e);
        }
        if (!Files.isWritable(directory)) {
            throw new IllegalArgumentException(named + ": its directory " + directory + " is not writable");
        }
        try {
            Files.deleteIfExists(jfr);
        } catch (IOException e) {
            throw new IllegalArgumentException(named + ": cannot remove the earlier recording there (" + e + ")", e);
        }
    }

    /**
     * Runs {@code jcmd <pid> <command> <options>} from this JDK, waits for it and returns its answer: its exit
     * status says little (0 when a recording could not be written).
     */
    private static String jcmd(long pid, String... command) throws IOException, InterruptedException {
        List<String> line = new ArrayList<>(
                List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), Long.toString(pid)));
        line.addAll(List.of(command));
        return Tools.run(line, Map.of(), Duration.ofSeconds(60));
    }

    private static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).strip().split("\\s+", -1);
            return fields[0] + " " + fields[1] + " " + fields[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static void dropSchema(String jdbcUrl, String schema) {
        try (Connection c = DriverManager.getConnection(jdbcUrl);
                Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        } catch (java.sql.SQLException e) {
            System.err.println("could not drop schema " + schema + ": " + e.getMessage());
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path path : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
