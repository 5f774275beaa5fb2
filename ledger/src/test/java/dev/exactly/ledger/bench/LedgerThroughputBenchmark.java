package dev.exactly.ledger.bench;

import dev.exactly.ledger.Account;
import dev.exactly.ledger.AccountSpec;
import dev.exactly.ledger.AccountType;
import dev.exactly.ledger.Currency;
import dev.exactly.ledger.EntryRequest;
import dev.exactly.ledger.Ledger;
import dev.exactly.ledger.LedgerSchema;
import dev.exactly.ledger.Money;
import dev.exactly.ledger.TrialBalance;
import dev.exactly.testing.SystemProperties;
import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Charges per second through the ledger when the clearing account that every charge debits is one hot
 * row, against the same account spread over N balance shards, measured in one run on one machine.
 * Each charge is one transaction: debit the clearing account, credit one of many customer liability
 * accounts, commit. Modes alternate (hot, spread, hot, spread, ...) so drift hits both alike; a plain
 * one-row insert-and-commit per transaction gives the server's commit rate as the physical limit.
 *
 * <p>Not part of the test run. Run it with:
 * <pre>
 * ./mvnw -q -pl ledger test-compile exec:java
 * ./mvnw -q -pl ledger test-compile exec:java -Dexactly.bench.threads=32 -Dexactly.bench.seconds=10
 * </pre>
 * Options (system properties): {@code exactly.bench.threads} (16), {@code .shards} (16),
 * {@code .customers} (1000), {@code .warmup} seconds (3), {@code .seconds} per measured round (5),
 * {@code .rounds} (2). {@code LedgerThroughputSmokeTest} runs a tiny version in the normal test run and
 * checks only correctness.
 */
public final class LedgerThroughputBenchmark {

    private static final Currency USD = Currency.of("USD");
    private static final String COUNT_ENTRIES = "SELECT count(*) FROM ledger_entry";
    private static final String CREATE_BASELINE = """
            CREATE TABLE IF NOT EXISTS bench_commit (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v bigint NOT NULL)
            """;
    private static final String INSERT_BASELINE = "INSERT INTO bench_commit (v) VALUES (?)";

    private LedgerThroughputBenchmark() {}

    /** What to run. */
    public record Config(int threads, int shards, int customers, Duration warmup, Duration measure, int rounds) {

        /** The full run, adjustable with {@code exactly.bench.*} system properties. */
        public static Config fromSystemProperties() {
            return new Config(
                    SystemProperties.integer("exactly.bench.threads", 16),
                    SystemProperties.integer("exactly.bench.shards", 16),
                    SystemProperties.integer("exactly.bench.customers", 1000),
                    SystemProperties.seconds("exactly.bench.warmup", Duration.ofSeconds(3)),
                    SystemProperties.seconds("exactly.bench.seconds", Duration.ofSeconds(5)),
                    SystemProperties.integer("exactly.bench.rounds", 2));
        }

        /** A run of about two seconds for the test suite. */
        public static Config smoke() {
            return new Config(4, 8, 50, Duration.ofMillis(100), Duration.ofMillis(600), 1);
        }
    }

    /** The measured figures of one mode, summed over its rounds. */
    public record ModeResult(
            String mode,
            int shards,
            long transactions,
            Duration elapsed,
            double p50Millis,
            double p99Millis,
            long amountMinorUnits) {

        /** Committed transactions per second. */
        public double perSecond() {
            return transactions / (elapsed.toNanos() / 1e9);
        }
    }

    /** The outcome of a run. */
    public record Report(
            Config config,
            ModeResult hot,
            ModeResult spread,
            ModeResult commitBaseline,
            long entriesInLedger,
            long entriesPosted,
            Money hotBalance,
            Money spreadBalance,
            TrialBalance trialBalance) {

        /** Spread over hot throughput. */
        public double ratio() {
            return spread.perSecond() / hot.perSecond();
        }

        /** A printable table. */
        public String format() {
            StringBuilder out = new StringBuilder();
            out.append(String.format(
                    Locale.ROOT,
                    "Ledger throughput: charges (debit clearing, credit 1 of %d customers), %d threads, %d x %d ms per mode%n",
                    config.customers(),
                    config.threads(),
                    config.rounds(),
                    config.measure().toMillis()));
            out.append(String.format(
                    Locale.ROOT, "%-16s %6s %10s %10s %8s %8s%n", "mode", "shards", "tx", "tx/s", "p50 ms", "p99 ms"));
            for (ModeResult r : List.of(hot, spread, commitBaseline)) {
                out.append(String.format(
                        Locale.ROOT,
                        "%-16s %6s %10d %10.0f %8.2f %8.2f%n",
                        r.mode(),
                        r.shards() == 0 ? "-" : Integer.toString(r.shards()),
                        r.transactions(),
                        r.perSecond(),
                        r.p50Millis(),
                        r.p99Millis()));
            }
            out.append(String.format(
                    Locale.ROOT,
                    "spread/hot ratio: %.2fx; spread reaches %.0f%% of the plain commit rate%n",
                    ratio(),
                    100 * spread.perSecond() / commitBaseline.perSecond()));
            out.append(String.format(
                    Locale.ROOT,
                    "checks: %d entries posted, %d in the ledger; clearing hot %s, spread %s; trial balance %s %s%n",
                    entriesPosted,
                    entriesInLedger,
                    hotBalance,
                    spreadBalance,
                    trialBalance.isBalanced() ? "balanced" : "NOT BALANCED",
                    trialBalance.totals()));
            return out.toString();
        }
    }

    public static void main(String[] args) throws Exception {
        Config config = Config.fromSystemProperties();
        DataSource dataSource = TestPostgres.freshSchema("ledger_bench");
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT version()")) {
            rs.next();
            System.out.println(rs.getString(1));
        }
        System.out.println(Runtime.getRuntime().availableProcessors() + " CPUs, Java " + Runtime.version());
        Report report = run(dataSource, config);
        System.out.print(report.format());
        if (!report.trialBalance().isBalanced() || report.entriesInLedger() != report.entriesPosted()) {
            throw new IllegalStateException("the ledger is not consistent after the run");
        }
    }

    /** Runs the benchmark on an empty schema of {@code dataSource}. */
    public static Report run(DataSource dataSource, Config config) throws Exception {
        LedgerSchema.migrate(dataSource);
        Ledger ledger = Ledger.of(dataSource);
        Account hot = ledger.openAccount(AccountSpec.of("clearing:hot", AccountType.ASSET, USD));
        Account spread = ledger.openAccount(
                AccountSpec.of("clearing:spread", AccountType.ASSET, USD).withShards(config.shards()));
        long[] customers = new long[config.customers()];
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            for (int i = 0; i < customers.length; i++) {
                customers[i] = ledger.openAccount(c, AccountSpec.of("customer:" + i, AccountType.LIABILITY, USD))
                        .id();
            }
            try (Statement s = c.createStatement()) {
                s.execute(CREATE_BASELINE);
            }
            c.commit();
        }

        List<Connection> connections = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(config.threads());
        try {
            for (int i = 0; i < config.threads(); i++) {
                Connection c = dataSource.getConnection();
                c.setAutoCommit(false);
                connections.add(c);
            }
            Charge hotCharge = (c, amount) -> ledger.post(c, charge(hot, customers, amount));
            Charge spreadCharge = (c, amount) -> ledger.post(c, charge(spread, customers, amount));
            Charge baseline = (c, amount) -> {
                try (var ps = c.prepareStatement(INSERT_BASELINE)) {
                    ps.setLong(1, amount);
                    ps.executeUpdate();
                }
            };
            Phase warmHot = runPhase(pool, connections, config.warmup(), hotCharge);
            Phase warmSpread = runPhase(pool, connections, config.warmup(), spreadCharge);
            List<Phase> hotPhases = new ArrayList<>();
            List<Phase> spreadPhases = new ArrayList<>();
            for (int round = 0; round < config.rounds(); round++) {
                hotPhases.add(runPhase(pool, connections, config.measure(), hotCharge));
                spreadPhases.add(runPhase(pool, connections, config.measure(), spreadCharge));
            }
            Phase commits = runPhase(pool, connections, config.measure(), baseline);

            ModeResult hotResult = Phase.merge("hot", 1, hotPhases);
            ModeResult spreadResult = Phase.merge("spread", config.shards(), spreadPhases);
            ModeResult commitResult = Phase.merge("plain commit", 0, List.of(commits));
            long posted = warmHot.transactions()
                    + warmSpread.transactions()
                    + hotResult.transactions()
                    + spreadResult.transactions();
            long inLedger;
            try (Statement s = connections.get(0).createStatement();
                    ResultSet rs = s.executeQuery(COUNT_ENTRIES)) {
                rs.next();
                inLedger = rs.getLong(1);
                connections.get(0).commit();
            }
            Money hotBalance = ledger.balance(hot.id());
            Money spreadBalance = ledger.balance(spread.id());
            long expectedHot = warmHot.amount() + hotResult.amountMinorUnits();
            long expectedSpread = warmSpread.amount() + spreadResult.amountMinorUnits();
            if (hotBalance.minorUnits() != expectedHot || spreadBalance.minorUnits() != expectedSpread) {
                throw new IllegalStateException("clearing balances " + hotBalance + ", " + spreadBalance
                        + " differ from the charges " + expectedHot + ", " + expectedSpread);
            }
            return new Report(
                    config,
                    hotResult,
                    spreadResult,
                    commitResult,
                    inLedger,
                    posted,
                    hotBalance,
                    spreadBalance,
                    ledger.trialBalance());
        } finally {
            pool.shutdownNow();
            for (Connection c : connections) {
                c.close();
            }
        }
    }

    private static EntryRequest charge(Account clearing, long[] customers, long amount) {
        long customer = customers[ThreadLocalRandom.current().nextInt(customers.length)];
        return EntryRequest.builder()
                .debit(clearing.id(), Money.of(amount, USD))
                .credit(customer, Money.of(amount, USD))
                .build();
    }

    @FunctionalInterface
    private interface Charge {
        void post(Connection c, long amount) throws SQLException;
    }

    /** One timed phase: every connection posts charges until the deadline. */
    private record Phase(long transactions, long nanos, long[] latencies, long amount) {

        static ModeResult merge(String mode, int shards, List<Phase> phases) {
            long transactions = phases.stream().mapToLong(Phase::transactions).sum();
            long nanos = phases.stream().mapToLong(Phase::nanos).sum();
            long amount = phases.stream().mapToLong(Phase::amount).sum();
            long[] all = phases.stream()
                    .flatMapToLong(p -> Arrays.stream(p.latencies()))
                    .sorted()
                    .toArray();
            return new ModeResult(
                    mode,
                    shards,
                    transactions,
                    Duration.ofNanos(nanos),
                    percentile(all, 0.50),
                    percentile(all, 0.99),
                    amount);
        }

        private static double percentile(long[] sorted, double p) {
            if (sorted.length == 0) {
                return 0;
            }
            return sorted[Math.min(sorted.length - 1, (int) (p * sorted.length))] / 1e6;
        }
    }

    private record WorkerResult(long transactions, long amount, long[] latencies) {}

    private static Phase runPhase(ExecutorService pool, List<Connection> connections, Duration length, Charge charge)
            throws Exception {
        CountDownLatch ready = new CountDownLatch(connections.size());
        CountDownLatch go = new CountDownLatch(1);
        long[] deadline = new long[1];
        List<Future<WorkerResult>> futures = new ArrayList<>();
        for (Connection c : connections) {
            futures.add(pool.submit(() -> {
                ready.countDown();
                go.await();
                long end = deadline[0];
                long count = 0;
                long amount = 0;
                long[] latencies = new long[1024];
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (System.nanoTime() < end) {
                    long value = random.nextLong(100, 10_000);
                    long start = System.nanoTime();
                    try {
                        charge.post(c, value);
                        c.commit();
                    } catch (RuntimeException | SQLException e) {
                        c.rollback();
                        throw e;
                    }
                    if (count == latencies.length) {
                        latencies = Arrays.copyOf(latencies, latencies.length * 2);
                    }
                    latencies[(int) count++] = System.nanoTime() - start;
                    amount += value;
                }
                return new WorkerResult(count, amount, Arrays.copyOf(latencies, (int) count));
            }));
        }
        ready.await();
        long start = System.nanoTime();
        deadline[0] = start + length.toNanos();
        go.countDown();
        long transactions = 0;
        long amount = 0;
        List<long[]> latencies = new ArrayList<>();
        for (Future<WorkerResult> f : futures) {
            WorkerResult r = f.get(length.toSeconds() + 120, TimeUnit.SECONDS);
            transactions += r.transactions();
            amount += r.amount();
            latencies.add(r.latencies());
        }
        long elapsed = System.nanoTime() - start;
        return new Phase(
                transactions,
                elapsed,
                latencies.stream().flatMapToLong(Arrays::stream).toArray(),
                amount);
    }
}
