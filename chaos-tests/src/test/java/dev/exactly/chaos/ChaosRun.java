package dev.exactly.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Runs scenarios on one topology: a fresh batch of payments under load, a fault in its window, the load
 * to its end, a drain, then the invariant checker over every payment sent so far. A scenario whose fault
 * missed its window is run again with fresh payments, a bounded number of times.
 */
final class ChaosRun {
    private static final int EARLIER_REPLAYS = 100;

    private final Topology topology;
    private final String runId;
    private final List<PaymentLog> all = new ArrayList<>();
    private final List<Result> results = new ArrayList<>();
    private final Path report;
    private long seed = 20261130;

    /**
     * One scenario attempt.
     *
     * @param scenario the scenario's name
     * @param fault    the fault's name
     * @param attempt  1 for the first attempt
     * @param evidence what the fault did, and whether it hit its window
     * @param report   the checker's report (cumulative over the topology)
     * @param answers  what the clients were answered during the attempt, by kind
     * @param took     wall time of the attempt
     */
    record Result(
            String scenario,
            String fault,
            int attempt,
            Fault.Evidence evidence,
            InvariantChecker.Report report,
            Map<String, Long> answers,
            Duration took) {
        String describe() {
            return "[" + scenario + (attempt > 1 ? " attempt " + attempt : "") + "] " + fault + ": "
                    + (evidence.hit() ? "HIT" : "MISSED")
                    + ": " + evidence.figures() + "\n    answers " + answers + "\n    checked " + report.figures()
                    + "\n    " + (report.clean() ? "invariants hold" : report.describe()) + "\n    took "
                    + took.toSeconds() + " s";
        }
    }

    ChaosRun(Topology topology, String runId) {
        this.topology = topology;
        this.runId = runId;
        this.report = topology.directory().resolve("report.txt");
    }

    List<Result> results() {
        return List.copyOf(results);
    }

    /** Payments sent so far. */
    int payments() {
        return all.size();
    }

    /**
     * Runs the scenario until its fault hits its window (at most {@code maxAttempts} times).
     *
     * @return the attempts, the last one first to look at
     */
    Result run(String name, int payments, Supplier<Fault> faults, int maxAttempts) {
        Result last = null;
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            last = runOnce(name, attempt, payments, faults.get());
            if (last.evidence().hit() || !last.report().clean()) {
                break;
            }
        }
        if (last == null) {
            throw new IllegalArgumentException("maxAttempts must be positive");
        }
        return last;
    }

    /**
     * A gentle load first (one request per payment, ten payments a second), checked like a scenario: the
     * JVMs compile their hot paths before the bursts of duplicates, so that the first scenario measures its
     * fault rather than a cold start.
     */
    Result warmUp(int payments) {
        LoadGenerator.Settings gentle =
                topology.load().settings().withDuplicates(1).withPacing(Duration.ofMillis(100));
        try (LoadGenerator generator = new LoadGenerator(topology.instances(), Topology.API_KEY, gentle)) {
            return runOnce("warm-up", 1, payments, Faults.none("one request per payment, 10 payments/s"), generator);
        }
    }

    private Result runOnce(String name, int attempt, int count, Fault fault) {
        return runOnce(name, attempt, count, fault, topology.load());
    }

    private Result runOnce(String name, int attempt, int count, Fault fault, LoadGenerator generator) {
        long start = System.nanoTime();
        String prefix = runId + "-" + name.replaceAll("[^a-z0-9]+", "-") + "-" + attempt;
        List<Payment> payments = Payment.batch(prefix, count, seed++);
        Map<String, Long> before = generator.answers();
        LoadGenerator.Run load = generator.start(payments);
        Exception injectFailure = null;
        try {
            fault.inject(topology, load);
        } catch (Exception e) {
            injectFailure = e;
        }
        Duration loadBound = generator.settings().deadline().plus(Duration.ofSeconds(30));
        if (!load.await(loadBound)) {
            load.abort();
        }
        all.addAll(load.logs());
        InvariantChecker.Drain drain = topology.checker().drain(Duration.ofSeconds(90));
        InvariantChecker.Report checked = topology.checker()
                .check(List.copyOf(all), replaySample(load.logs()), drain, topology.load(), topology.instances());
        Fault.Evidence evidence = injectFailure == null
                ? fault.evidence(topology, load)
                : new Fault.Evidence(false, "the fault could not be injected: " + injectFailure);
        Map<String, Long> after = generator.answers();
        Map<String, Long> answers = new TreeMap<>();
        after.forEach((k, v) -> {
            long d = v - before.getOrDefault(k, 0L);
            if (d > 0) {
                answers.put(k, d);
            }
        });
        Result result = new Result(
                name, fault.name(), attempt, evidence, checked, answers, Duration.ofNanos(System.nanoTime() - start));
        results.add(result);
        log(result.describe());
        return result;
    }

    /** This attempt's payments, and up to {@value #EARLIER_REPLAYS} earlier ones (spread evenly). */
    private List<PaymentLog> replaySample(List<PaymentLog> current) {
        List<PaymentLog> sample = new ArrayList<>(current);
        int earlier = all.size() - current.size();
        int step = Math.max(1, earlier / EARLIER_REPLAYS);
        for (int i = 0; i < earlier; i += step) {
            sample.add(all.get(i));
        }
        return sample;
    }

    /** Prints a line to the test's output and appends it to the run's report file. */
    void log(String text) {
        System.out.println(text);
        try {
            Files.writeString(report, text + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
