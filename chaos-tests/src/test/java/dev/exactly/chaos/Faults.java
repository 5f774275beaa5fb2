package dev.exactly.chaos;

import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import org.awaitility.core.ConditionTimeoutException;

/** The faults of BRIEF §8, each timed to land while requests are in flight. */
final class Faults {
    private Faults() {}

    private static final Duration WINDOW = Duration.ofSeconds(30);

    /** Charges of these scopes whose durable record was taken over at least once, and of those the finished ones. */
    private static final String TAKEN_OVER = """
            SELECT count(*) FILTER (WHERE r.takeovers > 0),
                   count(*) FILTER (WHERE r.takeovers > 0 AND c.status <> 'pending')
            FROM payments_charge c
            LEFT JOIN idempotency_records r ON r.scope_key = c.scope_key
            WHERE c.scope_key = ANY (?)
            """;

    private static final String PROCESSING_AMONG =
            "SELECT count(*) FROM idempotency_records WHERE status = 'PROCESSING' AND scope_key = ANY (?)";
    private static final String RETRIED = "SELECT count(*) FROM payments_charge WHERE attempts > 0";

    /**
     * Waits (bounded) until at least {@code min} requests are in flight at {@code victim}, and at least one
     * payment whose requests are all at the victim has its durable record PROCESSING: the victim itself owns
     * work in progress (it is past the claim, e.g. waiting on the processor).
     */
    static void awaitInFlight(Topology t, ServiceInstance victim, int min) {
        await("%d requests in flight at %s, one of its own PROCESSING".formatted(min, victim.name()))
                .atMost(WINDOW)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> t.load().inFlight(victim) >= min
                        && processingAmong(t, t.load().inFlightOnlyAt(victim)) > 0);
    }

    /** How many of these payments' durable records are PROCESSING. */
    static long processingAmong(Topology t, Collection<String> paymentKeys) {
        if (paymentKeys.isEmpty()) {
            return 0;
        }
        try (Connection c = t.database().dataSource().getConnection();
                PreparedStatement s = c.prepareStatement(PROCESSING_AMONG)) {
            s.setArray(1, c.createArrayOf("text", scopes(paymentKeys)));
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            return 0;
        }
    }

    private static String[] scopes(Collection<String> paymentKeys) {
        return paymentKeys.stream()
                .map(k -> new Payment(k, 1, "", false, new byte[0]).scopeHash(Topology.TENANT))
                .toArray(String[]::new);
    }

    /** [taken over, taken over and finished] among the charges of these payment keys. */
    static long[] takenOver(Topology t, Collection<String> paymentKeys) {
        try (Connection c = t.database().dataSource().getConnection();
                PreparedStatement s = c.prepareStatement(TAKEN_OVER)) {
            s.setArray(1, c.createArrayOf("text", scopes(paymentKeys)));
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return new long[] {rs.getLong(1), rs.getLong(2)};
            }
        } catch (SQLException e) {
            return new long[] {-1, -1};
        }
    }

    /** Runs {@code window} with the processor slowed down by {@code latency}, and restores it afterwards. */
    private static void withLatency(Topology t, Duration latency, Runnable window) {
        t.processor().setFaults("{\"latency_ms\":" + latency.toMillis() + "}");
        try {
            window.run();
        } finally {
            t.processor().clearFaults();
        }
    }

    static long retriedCharges(Topology t) {
        try (Connection c = t.database().dataSource().getConnection();
                PreparedStatement s = c.prepareStatement(RETRIED);
                ResultSet rs = s.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            return -1;
        }
    }

    private static long answered(Map<String, Long> before, Map<String, Long> after, String prefix) {
        long n = 0;
        for (var e : after.entrySet()) {
            if (e.getKey().startsWith(prefix)) {
                n += e.getValue() - before.getOrDefault(e.getKey(), 0L);
            }
        }
        return n;
    }

    /** The answers counted in {@code after} and not yet in {@code before}, by kind. */
    private static Map<String, Long> diff(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> more = new java.util.TreeMap<>();
        after.forEach((kind, n) -> {
            long added = n - before.getOrDefault(kind, 0L);
            if (added > 0) {
                more.put(kind, added);
            }
        });
        return more;
    }

    private static String seconds(Duration d) {
        return String.format(java.util.Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }

    /**
     * {@code kill -9} of one service JVM while its requests wait on a slow processor, then a restart. Hit:
     * requests were in flight at the victim at the kill, and durable records of the victim's in-flight
     * payments were taken over (by the other instance's worker or a retry) to be finished.
     */
    static Fault killNine(int victimIndex, int minInFlight, Duration processorLatency) {
        return new Fault() {
            int inFlight;
            Set<String> keys = Set.of();
            long processing;
            long ownProcessing;
            long takeoversBefore;
            Duration restart = Duration.ZERO;

            @Override
            public String name() {
                return "kill -9";
            }

            @Override
            public void inject(Topology t, LoadGenerator.Run run) {
                ServiceInstance victim = t.instance(victimIndex);
                withLatency(t, processorLatency, () -> {
                    takeoversBefore = t.checker().takeovers();
                    awaitInFlight(t, victim, minInFlight);
                    inFlight = t.load().inFlight(victim);
                    keys = t.load().inFlightKeys(victim);
                    processing = t.checker().processing();
                    ownProcessing = processingAmong(t, t.load().inFlightOnlyAt(victim));
                    victim.kill();
                });
                restart = t.restart(victim);
            }

            @Override
            public Evidence evidence(Topology t, LoadGenerator.Run run) {
                long[] taken = takenOver(t, keys);
                long takeovers = t.checker().takeovers() - takeoversBefore;
                return new Evidence(
                        inFlight > 0 && taken[0] > 0 && takeovers > 0,
                        "requests in flight at the kill: " + inFlight + " (" + keys.size()
                                + " payments), PROCESSING records: "
                                + processing + " (" + ownProcessing
                                + " of payments only the victim was serving), the victim's payments taken over: "
                                + taken[0] + ", takeovers: +" + takeovers
                                + ", restart took " + seconds(restart));
            }
        };
    }

    /**
     * {@code SIGSTOP} of one service JVM, held past the durable lease until the other instance has taken
     * over and finished the victim's in-flight payments, then {@code SIGCONT}: the stale owner's late
     * answers must be the winner's recorded answer (checked byte for byte by the checker), never a second
     * execution. Hit: requests were in flight at the freeze, and payments the frozen owner held were taken
     * over and finished while it was frozen.
     */
    static Fault pausePastLease(int victimIndex, int minInFlight, Duration processorLatency) {
        return new Fault() {
            int inFlight;
            Set<String> keys = Set.of();
            long takeoversBefore;
            long takeoversWhilePaused;
            long finishedWhilePaused;
            Duration paused = Duration.ZERO;
            Map<String, Long> answersAtResume = Map.of();

            @Override
            public String name() {
                return "SIGSTOP past the lease";
            }

            @Override
            public void inject(Topology t, LoadGenerator.Run run) {
                ServiceInstance victim = t.instance(victimIndex);
                Duration lease = t.settings().lease();
                withLatency(t, processorLatency, () -> {
                    takeoversBefore = t.checker().takeovers();
                    awaitInFlight(t, victim, minInFlight);
                    inFlight = t.load().inFlight(victim);
                    keys = t.load().inFlightKeys(victim);
                    victim.pause();
                });
                long start = System.nanoTime();
                try {
                    // hold the freeze past the lease until the frozen owner's work was taken over and finished
                    await("takeover while %s is frozen".formatted(victim.name()))
                            .atMost(lease.plus(Duration.ofSeconds(20)))
                            .pollDelay(lease.plus(t.settings().recoveryInterval()))
                            .pollInterval(Duration.ofMillis(100))
                            .until(() ->
                                    takenOver(t, keys)[1] > 0 && t.checker().takeovers() > takeoversBefore);
                } catch (ConditionTimeoutException e) {
                    // evidence() reports the miss
                } finally {
                    long[] taken = takenOver(t, keys);
                    takeoversWhilePaused = t.checker().takeovers() - takeoversBefore;
                    finishedWhilePaused = taken[1];
                    paused = Duration.ofNanos(System.nanoTime() - start);
                    answersAtResume = t.load().answers();
                    victim.resume();
                }
            }

            @Override
            public Evidence evidence(Topology t, LoadGenerator.Run run) {
                long[] taken = takenOver(t, keys);
                Map<String, Long> after = t.load().answers();
                long leaseLost = answered(answersAtResume, after, "409 idempotency_lease_lost");
                long staleReplays = run.logs().stream()
                        .filter(l -> keys.contains(l.payment().key()))
                        .flatMap(l -> l.acks().stream())
                        .filter(a -> a.instance().equals(t.instance(victimIndex).name()) && a.replayed())
                        .count();
                return new Evidence(
                        inFlight > 0 && takeoversWhilePaused > 0 && finishedWhilePaused > 0,
                        "requests in flight at the freeze: " + inFlight + " (" + keys.size() + " payments), frozen for "
                                + seconds(paused) + " (lease "
                                + seconds(t.settings().lease()) + "), takeovers while frozen: +"
                                + takeoversWhilePaused + ", the frozen owner's payments taken over: " + taken[0]
                                + " (finished while frozen: " + finishedWhilePaused + "), its late answers: "
                                + staleReplays
                                + " replays of the winner's answer, " + leaseLost + " lease-lost 409s");
            }
        };
    }

    /**
     * Redis stopped while requests are in flight, and an empty one started on the same port. The service's
     * hot tier passes requests to the durable tier while Redis is away ({@code when-store-unavailable:
     * pass-through}), so payments are answered meanwhile.
     */
    static Fault redisRestart(int minInFlight) {
        return new Fault() {
            long keysBefore;
            int inFlight;
            Map<String, Long> whileDown = Map.of();
            Duration down = Duration.ZERO;

            @Override
            public String name() {
                return "Redis restart";
            }

            @Override
            public void inject(Topology t, LoadGenerator.Run run) {
                awaitAnyInFlight(t, minInFlight);
                keysBefore = t.redis().keys();
                inFlight = totalInFlight(t);
                long start = System.nanoTime();
                Map<String, Long> atStop = t.load().answers();
                t.redis().stopProcess();
                try {
                    // keep it down until payments were answered without it (through the durable tier), at most a
                    // few seconds
                    await("a payment answered while Redis is down")
                            .atMost(Duration.ofSeconds(4))
                            .pollInterval(Duration.ofMillis(50))
                            .until(() -> answered(atStop, t.load().answers(), "2") > 0);
                } catch (ConditionTimeoutException e) {
                    // evidence() reports how many were answered
                } finally {
                    whileDown = diff(atStop, t.load().answers());
                    t.redis().startAgain();
                    down = Duration.ofNanos(System.nanoTime() - start);
                }
            }

            @Override
            public Evidence evidence(Topology t, LoadGenerator.Run run) {
                return new Evidence(
                        keysBefore > 0 && inFlight > 0,
                        "hot-tier keys lost: " + keysBefore + ", requests in flight: " + inFlight + ", down for "
                                + seconds(down) + ", answered meanwhile: " + answered(Map.of(), whileDown, "2")
                                + " 2xx, " + answered(Map.of(), whileDown, "402") + " 402, "
                                + answered(Map.of(), whileDown, "503") + " 503");
            }
        };
    }

    /**
     * {@code FLUSHALL} while requests are in flight, up to {@code times} times while the load lasts: the hot
     * tier forgets every record at once, in-flight claims included, and the durable tier must decide.
     */
    static Fault redisFlush(int minInFlight, int times) {
        return new Fault() {
            long keysFlushed;
            int inFlight;
            int flushes;

            @Override
            public String name() {
                return "Redis FLUSHALL";
            }

            @Override
            public void inject(Topology t, LoadGenerator.Run run) {
                for (int i = 0; i < times && run.sendersDone() < run.senders(); i++) {
                    try {
                        awaitAnyInFlight(t, minInFlight);
                    } catch (ConditionTimeoutException e) {
                        if (flushes == 0) {
                            throw e;
                        }
                        break; // the load ended after the last flush
                    }
                    long keys = t.redis().keys();
                    inFlight += totalInFlight(t);
                    t.redis().flushAll();
                    keysFlushed += keys;
                    flushes++;
                    // let the load go on for a while before the next flush
                    int done = run.sendersDone();
                    int step = Math.max(1, run.senders() / (times + 1));
                    try {
                        await().atMost(WINDOW)
                                .pollInterval(Duration.ofMillis(50))
                                .until(() -> run.sendersDone() >= Math.min(run.senders(), done + step));
                    } catch (ConditionTimeoutException e) {
                        break;
                    }
                }
            }

            @Override
            public Evidence evidence(Topology t, LoadGenerator.Run run) {
                return new Evidence(
                        flushes > 0 && keysFlushed > 0 && inFlight > 0,
                        flushes + " FLUSHALL(s), hot-tier keys forgotten: " + keysFlushed + ", requests in flight: "
                                + inFlight);
            }
        };
    }

    /** {@code pg_ctl restart -m immediate} of the services' PostgreSQL while requests are in flight. */
    static Fault postgresRestart(int minInFlight, Duration processorLatency) {
        return new Fault() {
            int inFlight;
            long processing;
            long pidBefore;
            long pidAfter;
            Duration took = Duration.ZERO;
            Map<String, Long> before = Map.of();

            @Override
            public String name() {
                return "PostgreSQL immediate restart";
            }

            @Override
            public void inject(Topology t, LoadGenerator.Run run) {
                if (!(t.database() instanceof ChaosDatabase.OwnServer server)) {
                    throw new IllegalStateException("the PostgreSQL restart needs a server of the test's own");
                }
                before = t.load().answers();
                withLatency(t, processorLatency, () -> {
                    awaitAnyInFlight(t, minInFlight);
                    await().atMost(WINDOW)
                            .pollInterval(Duration.ofMillis(20))
                            .until(() -> t.checker().processing() > 0);
                    inFlight = totalInFlight(t);
                    processing = t.checker().processing();
                    pidBefore = server.postmasterPid();
                    long start = System.nanoTime();
                    server.restartImmediate();
                    took = Duration.ofNanos(System.nanoTime() - start);
                    pidAfter = server.postmasterPid();
                });
            }

            @Override
            public Evidence evidence(Topology t, LoadGenerator.Run run) {
                Map<String, Long> after = t.load().answers();
                long unavailable = answered(before, after, "503");
                return new Evidence(
                        pidAfter != pidBefore && inFlight > 0 && processing > 0,
                        "postmaster " + pidBefore + " -> " + pidAfter + " in " + seconds(took)
                                + ", requests in flight: " + inFlight
                                + ", PROCESSING records at the crash: " + processing + ", 503 answers: " + unavailable
                                + ", connection errors: " + answered(before, after, "io"));
            }
        };
    }

    /**
     * Processor faults on the next requests: the charge is captured and then the answer is lost (dropped
     * connection), or comes after the service's timeout (timeout after capture), or never (timeout before
     * capture). Hit: the processor counted each kind as fired, and charges needed more than one attempt.
     */
    static Fault processorFaults(int each) {
        return new Fault() {
            long retriedBefore;
            Map<String, Long> firedBefore = Map.of();

            @Override
            public String name() {
                return "processor timeouts and lost responses";
            }

            @Override
            public void inject(Topology t, LoadGenerator.Run run) {
                retriedBefore = retriedCharges(t);
                firedBefore = fired(t);
                t.processor().failNext(each, "drop-response");
                t.processor().failNext(each, "timeout-after-capture=3s");
                t.processor().failNext(each, "timeout=3s");
            }

            @Override
            public Evidence evidence(Topology t, LoadGenerator.Run run) {
                Map<String, Long> after = fired(t);
                long dropped = after.get("drop-response") - firedBefore.get("drop-response");
                long late = after.get("timeout-after-capture") - firedBefore.get("timeout-after-capture");
                long timeouts = after.get("timeout") - firedBefore.get("timeout");
                long retried = retriedCharges(t) - retriedBefore;
                return new Evidence(
                        dropped > 0 && late > 0 && timeouts > 0 && retried > 0,
                        "fired: drop-response " + dropped + ", timeout-after-capture " + late + ", timeout " + timeouts
                                + "; charges that needed another attempt: +" + retried);
            }
        };
    }

    /**
     * The processor slower than the lease: a retry or the worker takes the record over and calls the
     * processor again with the same downstream key while the first call is still in flight. An honest
     * processor answers the second call from its idempotency record. Hit: takeovers, and the processor
     * replayed at least one call.
     */
    static Fault slowProcessor(Duration latency, int minInFlight) {
        return new Fault() {
            long takeoversBefore;
            long replaysBefore;
            int inFlight;

            @Override
            public String name() {
                return "processor slower than the lease";
            }

            @Override
            public void inject(Topology t, LoadGenerator.Run run) {
                takeoversBefore = t.checker().takeovers();
                replaysBefore = t.processor().stats().replays();
                withLatency(t, latency, () -> {
                    awaitAnyInFlight(t, minInFlight);
                    inFlight = totalInFlight(t);
                    try {
                        await("takeovers of slow calls")
                                .atMost(WINDOW)
                                .pollInterval(Duration.ofMillis(100))
                                .until(() -> t.checker().takeovers() > takeoversBefore);
                    } catch (ConditionTimeoutException e) {
                        // evidence() reports the miss
                    }
                });
            }

            @Override
            public Evidence evidence(Topology t, LoadGenerator.Run run) {
                long takeovers = t.checker().takeovers() - takeoversBefore;
                long replays = t.processor().stats().replays() - replaysBefore;
                return new Evidence(
                        inFlight > 0 && takeovers > 0 && replays > 0,
                        "processor latency " + seconds(latency) + " (lease "
                                + seconds(t.settings().lease()) + "), requests in flight: "
                                + inFlight + ", takeovers: +" + takeovers
                                + ", second calls answered by the processor's own record: "
                                + replays);
            }
        };
    }

    /** No fault injected during the load: a baseline, or a setup that is broken by itself. */
    static Fault none(String name) {
        return new Fault() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public void inject(Topology t, LoadGenerator.Run run) {}

            @Override
            public Evidence evidence(Topology t, LoadGenerator.Run run) {
                return new Evidence(true, "the load alone");
            }
        };
    }

    private static Map<String, Long> fired(Topology t) {
        Map<String, Long> out = new java.util.HashMap<>();
        t.processor().stats().faults().forEach((k, v) -> out.put(k.wireName(), v));
        return out;
    }

    private static void awaitAnyInFlight(Topology t, int min) {
        await("%d requests in flight".formatted(min))
                .atMost(WINDOW)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> totalInFlight(t) >= min);
    }

    private static int totalInFlight(Topology t) {
        int n = 0;
        for (ServiceInstance i : t.instances()) {
            n += t.load().inFlight(i);
        }
        return n;
    }
}
