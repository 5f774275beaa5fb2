package dev.exactly.chaos;

import static org.awaitility.Awaitility.await;

import dev.exactly.psp.Capture;
import dev.exactly.psp.PspStats;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The invariants of BRIEF §8, checked after a drain against what really happened: the processor's capture
 * log, the service's tables in PostgreSQL, and what the clients were told.
 *
 * <ul>
 *   <li>after the drain nothing is left {@code PROCESSING} (durable records), {@code pending} or
 *       {@code dead_lettered} (charges);</li>
 *   <li>per logical payment: at most one capture at the processor (by the charge's downstream key) and at
 *       most one journal entry; a succeeded charge has exactly one of each, a declined one none; no capture
 *       and no entry belongs to no charge;</li>
 *   <li>every acknowledged payment is in the database with the acknowledged status, the requested amount
 *       and the acknowledged bytes as its recorded answer; every acknowledgement of a payment is
 *       byte-identical to the first, and so is a replay sent to each instance after the drain;</li>
 *   <li>Σdebits = Σcredits per currency, and every account's balance rows equal its postings;</li>
 *   <li>no client ever got an unexpected answer (a 500, or a 4xx to a valid request).</li>
 * </ul>
 */
final class InvariantChecker {
    private static final int MAX_LISTED = 25;

    private static final String COUNT_OPEN = """
            SELECT (SELECT count(*) FROM payments_charge WHERE status = 'pending'),
                   (SELECT count(*) FROM payments_charge WHERE status = 'dead_lettered'),
                   (SELECT count(*) FROM idempotency_records WHERE status = 'PROCESSING')
            """;
    private static final String CHARGES = """
            SELECT c.id, c.scope_key, c.amount, c.status, c.downstream_key, c.response_status, c.response_body,
                   c.attempts, coalesce(r.takeovers, 0) AS takeovers
            FROM payments_charge c
            LEFT JOIN idempotency_records r ON r.scope_key = c.scope_key
            """;
    private static final String CHARGE_ENTRIES = """
            SELECT e.external_ref, count(DISTINCT e.id) AS entries,
                   coalesce(sum(p.amount) FILTER (WHERE p.side = 'debit'), 0) AS debits,
                   coalesce(sum(p.amount) FILTER (WHERE p.side = 'credit'), 0) AS credits
            FROM ledger_entry e
            LEFT JOIN ledger_posting p ON p.entry_id = e.id
            WHERE e.external_ref LIKE 'charge:%'
            GROUP BY e.external_ref
            """;
    private static final String TRIAL_BALANCE = """
            SELECT currency,
                   coalesce(sum(amount) FILTER (WHERE side = 'debit'), 0) AS debits,
                   coalesce(sum(amount) FILTER (WHERE side = 'credit'), 0) AS credits
            FROM ledger_posting
            GROUP BY currency
            ORDER BY currency
            """;
    private static final String BALANCES_VS_POSTINGS = """
            SELECT a.code,
                   coalesce((SELECT sum(b.balance) FROM ledger_balance b WHERE b.account_id = a.id), 0) AS balance,
                   coalesce((SELECT sum(CASE WHEN p.side = a.normal_balance THEN p.amount ELSE -p.amount END)
                             FROM ledger_posting p WHERE p.account_id = a.id), 0) AS postings
            FROM ledger_account a
            """;
    private static final String TAKEOVERS = "SELECT coalesce(sum(takeovers), 0) FROM idempotency_records";
    private static final String ENTRY_COUNT = "SELECT count(*) FROM ledger_entry";

    private final DataSource dataSource;
    private final Processor processor;
    private final String tenant;

    InvariantChecker(DataSource dataSource, Processor processor, String tenant) {
        this.dataSource = dataSource;
        this.processor = processor;
        this.tenant = tenant;
    }

    /** Open work after a drain. */
    record Drain(boolean drained, Duration took, long pending, long deadLettered, long processing) {}

    /** What the checker found, and the run's figures. */
    record Report(List<String> violations, Figures figures) {
        boolean clean() {
            return violations.isEmpty();
        }

        /** The violations, at most {@value #MAX_LISTED} of them, one a line. */
        String describe() {
            List<String> shown = violations.subList(0, Math.min(MAX_LISTED, violations.size()));
            return violations.size() + " violation(s):\n  " + String.join("\n  ", shown)
                    + (violations.size() > shown.size() ? "\n  ..." : "");
        }

        boolean mentions(String fragment) {
            return violations.stream().anyMatch(v -> v.contains(fragment));
        }
    }

    /**
     * Figures of a checked run (cumulative over the topology's life).
     *
     * @param payments        logical payments checked
     * @param acknowledged    payments with at least one acknowledgement
     * @param acks            acknowledgements received by the clients
     * @param replays         replays sent after the drain and compared
     * @param succeeded       succeeded charges in the database
     * @param failed          failed (declined) charges
     * @param captures        captures in the processor's log
     * @param journalEntries  journal entries
     * @param takeovers       expired leases taken over (Σ {@code idempotency_records.takeovers})
     * @param retriedCharges  charges that needed more than one processor attempt
     * @param processorFaults processor faults that fired, by kind
     */
    record Figures(
            int payments,
            int acknowledged,
            long acks,
            long replays,
            long succeeded,
            long failed,
            long captures,
            long journalEntries,
            long takeovers,
            long retriedCharges,
            Map<String, Long> processorFaults) {
        @Override
        public String toString() {
            return "payments=" + payments + " acknowledged=" + acknowledged + " acks=" + acks + " replays=" + replays
                    + " succeeded=" + succeeded + " failed=" + failed + " captures=" + captures
                    + " journalEntries=" + journalEntries + " takeovers=" + takeovers + " retriedCharges="
                    + retriedCharges
                    + " processorFaults=" + processorFaults;
        }
    }

    /** Waits (bounded) until nothing is PROCESSING or pending; reports what is left if that never happens. */
    Drain drain(Duration timeout) {
        long start = System.nanoTime();
        boolean drained;
        try {
            await("drain")
                    .atMost(timeout)
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptionsInstanceOf(SQLException.class)
                    .until(() -> {
                        long[] open = open();
                        return open[0] == 0 && open[2] == 0;
                    });
            drained = true;
        } catch (ConditionTimeoutException e) {
            drained = false;
        }
        long[] open = openQuietly();
        return new Drain(drained, Duration.ofNanos(System.nanoTime() - start), open[0], open[1], open[2]);
    }

    /** Σ takeovers of durable records so far. */
    long takeovers() {
        return queryLong(TAKEOVERS);
    }

    /** Journal entries so far. */
    long journalEntries() {
        return queryLong(ENTRY_COUNT);
    }

    /** Durable records in PROCESSING right now. */
    long processing() {
        return openQuietly()[2];
    }

    /**
     * Checks every invariant over {@code logs} (the payments sent so far) and the whole database and
     * processor; replays each payment of {@code replay} once on each instance.
     */
    Report check(
            List<PaymentLog> logs,
            List<PaymentLog> replay,
            Drain drain,
            LoadGenerator load,
            List<ServiceInstance> instances) {
        List<String> violations = new ArrayList<>();
        if (!drain.drained() || drain.pending() > 0 || drain.processing() > 0) {
            violations.add("not drained after " + drain.took().toSeconds() + " s: " + drain.pending()
                    + " pending charge(s), " + drain.processing() + " PROCESSING record(s)");
        }
        if (drain.deadLettered() > 0) {
            violations.add(drain.deadLettered() + " charge(s) dead-lettered");
        }
        Map<String, ChargeRow> byScope = new HashMap<>();
        Map<String, ChargeRow> byDownstreamKey = new HashMap<>();
        Map<String, EntryRow> entries = new HashMap<>();
        long takeovers;
        long retried = 0;
        long succeeded = 0;
        long failed = 0;
        long entryCount;
        try (Connection c = dataSource.getConnection()) {
            try (PreparedStatement s = c.prepareStatement(CHARGES);
                    ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    ChargeRow row = new ChargeRow(
                            rs.getString("id"),
                            rs.getString("scope_key"),
                            rs.getLong("amount"),
                            rs.getString("status"),
                            rs.getString("downstream_key"),
                            (Integer) rs.getObject("response_status"),
                            rs.getBytes("response_body"),
                            rs.getInt("attempts"),
                            rs.getInt("takeovers"));
                    byScope.put(row.scopeKey(), row);
                    byDownstreamKey.put(row.downstreamKey(), row);
                    retried += row.attempts() > 0 ? 1 : 0;
                    succeeded += row.status().equals("succeeded") ? 1 : 0;
                    failed += row.status().equals("failed") ? 1 : 0;
                }
            }
            try (PreparedStatement s = c.prepareStatement(CHARGE_ENTRIES);
                    ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    entries.put(
                            rs.getString("external_ref"),
                            new EntryRow(rs.getLong("entries"), rs.getLong("debits"), rs.getLong("credits")));
                }
            }
            try (PreparedStatement s = c.prepareStatement(TRIAL_BALANCE);
                    ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    long debits = rs.getLong("debits");
                    long credits = rs.getLong("credits");
                    if (debits != credits) {
                        violations.add("trial balance in " + rs.getString("currency") + ": debits " + debits
                                + " != credits " + credits);
                    }
                }
            }
            try (PreparedStatement s = c.prepareStatement(BALANCES_VS_POSTINGS);
                    ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    if (rs.getLong("balance") != rs.getLong("postings")) {
                        violations.add("account " + rs.getString("code") + ": balance " + rs.getLong("balance")
                                + " != postings " + rs.getLong("postings"));
                    }
                }
            }
            takeovers = single(c, TAKEOVERS);
            entryCount = single(c, ENTRY_COUNT);
        } catch (SQLException e) {
            violations.add("could not read the database: " + e);
            return new Report(violations, new Figures(logs.size(), 0, 0, 0, 0, 0, 0, 0, 0, 0, Map.of()));
        }

        List<Capture> captures = processor.captures();
        Map<String, List<Capture>> capturesByKey = new HashMap<>();
        for (Capture capture : captures) {
            capturesByKey
                    .computeIfAbsent(capture.idempotencyKey(), k -> new ArrayList<>())
                    .add(capture);
        }
        capturesByKey.forEach((key, list) -> {
            if (!byDownstreamKey.containsKey(key)) {
                violations.add("processor captured " + list.size() + "x under " + key + ", which no charge has");
            }
        });
        Set<String> chargeRefs = new HashSet<>();
        byScope.values().forEach(row -> chargeRefs.add("charge:" + row.id()));
        entries.keySet().stream()
                .filter(ref -> !chargeRefs.contains(ref))
                .forEach(ref -> violations.add("journal entry " + ref + " belongs to no charge"));
        for (ChargeRow row : byScope.values()) {
            List<Capture> captured = capturesByKey.getOrDefault(row.downstreamKey(), List.of());
            EntryRow entry = entries.get("charge:" + row.id());
            long entriesOfCharge = entry == null ? 0 : entry.entries();
            if (captured.size() > 1) {
                violations.add(
                        "double capture: charge " + row.id() + " captured " + captured.size() + "x at the processor");
            }
            if (entriesOfCharge > 1) {
                violations.add("double journal entry: charge " + row.id() + " has " + entriesOfCharge + " entries");
            }
            switch (row.status()) {
                case "succeeded" -> {
                    if (captured.isEmpty()) {
                        violations.add("charge " + row.id() + " succeeded without a capture at the processor");
                    }
                    if (entry == null || entry.debits() != row.amount() || entry.credits() != row.amount()) {
                        violations.add("charge " + row.id() + " succeeded but its journal entry is " + entry + " for "
                                + row.amount());
                    }
                    captured.stream()
                            .filter(cap -> cap.amount() != row.amount())
                            .forEach(cap -> violations.add(
                                    "charge " + row.id() + " of " + row.amount() + " captured " + cap.amount()));
                }
                case "failed" -> {
                    if (!captured.isEmpty()) {
                        violations.add("charge " + row.id() + " failed but the processor captured it");
                    }
                    if (entry != null) {
                        violations.add("charge " + row.id() + " failed but has a journal entry");
                    }
                }
                default -> {}
            }
        }

        long acks = 0;
        int acknowledged = 0;
        for (PaymentLog log : logs) {
            Payment p = log.payment();
            log.unexpectedAnswers().stream()
                    .limit(3)
                    .forEach(u -> violations.add("payment " + p.key() + ": unexpected answer " + u));
            List<PaymentLog.Ack> all = log.acks();
            acks += all.size();
            ChargeRow row = byScope.get(p.scopeHash(tenant));
            var first = log.first();
            if (first.isEmpty()) {
                violations.add("payment " + p.key() + " was never acknowledged");
                continue;
            }
            acknowledged++;
            PaymentLog.Ack ack = first.get();
            for (PaymentLog.Ack other : all) {
                if (other.status() != ack.status() || !Arrays.equals(other.body(), ack.body())) {
                    violations.add("payment " + p.key() + ": acknowledgements differ: " + describe(ack) + " vs "
                            + describe(other));
                    break;
                }
            }
            if (row == null) {
                violations.add("payment " + p.key() + " was acknowledged " + ack.status()
                        + " but has no charge in the database");
                continue;
            }
            String expectedStatus = p.declines() ? "failed" : "succeeded";
            int expectedAck = p.declines() ? 402 : 201;
            if (ack.status() != expectedAck || !row.status().equals(expectedStatus)) {
                violations.add("payment " + p.key() + ": acknowledged " + ack.status() + ", charge " + row.id() + " is "
                        + row.status() + " (expected " + expectedAck + "/" + expectedStatus + ")");
            }
            if (row.amount() != p.amount()) {
                violations.add("payment " + p.key() + ": charge " + row.id() + " has amount " + row.amount()
                        + ", requested " + p.amount());
            }
            if (row.responseStatus() == null
                    || row.responseStatus() != ack.status()
                    || !Arrays.equals(row.responseBody(), ack.body())) {
                violations.add("payment " + p.key() + ": the recorded answer of " + row.id() + " ("
                        + row.responseStatus() + ") is not the acknowledged one (" + describe(ack) + ")");
            }
        }

        long replays = replayAll(replay, load, instances, violations);
        PspStats stats = processor.stats();
        Map<String, Long> faults = new TreeMap<>();
        stats.faults().forEach((kind, n) -> {
            if (n > 0) {
                faults.put(kind.wireName(), n);
            }
        });
        Figures figures = new Figures(
                logs.size(),
                acknowledged,
                acks,
                replays,
                succeeded,
                failed,
                captures.size(),
                entryCount,
                takeovers,
                retried,
                faults);
        return new Report(List.copyOf(violations), figures);
    }

    /** Replays every acknowledged payment on every instance; each answer must equal the first acknowledgement. */
    private static long replayAll(
            List<PaymentLog> logs, LoadGenerator load, List<ServiceInstance> instances, List<String> violations) {
        LongAdder sent = new LongAdder();
        List<String> found = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Runnable> replays = new ArrayList<>();
        for (PaymentLog log : logs) {
            var first = log.first();
            if (first.isEmpty()) {
                continue;
            }
            PaymentLog.Ack ack = first.get();
            for (ServiceInstance instance : instances) {
                replays.add(() -> {
                    // retried by the load's client (409, 5xx, connection errors) on this instance only
                    LoadGenerator.Answer answer = load.sendRetrying(instance, log.payment());
                    sent.increment();
                    if (answer.status() != ack.status() || !Arrays.equals(answer.body(), ack.body())) {
                        found.add("payment " + log.payment().key() + ": replay on " + instance.name() + " answered "
                                + answer.kind() + " " + new String(answer.body(), StandardCharsets.UTF_8)
                                + ", first acknowledgement was " + describe(ack));
                    }
                });
            }
        }
        Parallel.runAll(replays, 16);
        violations.addAll(found);
        return sent.sum();
    }

    private static String describe(PaymentLog.Ack ack) {
        return ack.status() + " from " + ack.instance() + " " + new String(ack.body(), StandardCharsets.UTF_8);
    }

    private long[] open() throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement s = c.prepareStatement(COUNT_OPEN);
                ResultSet rs = s.executeQuery()) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
        }
    }

    private long[] openQuietly() {
        try {
            return open();
        } catch (SQLException e) {
            return new long[] {-1, -1, -1};
        }
    }

    private long queryLong(String sql) {
        try (Connection c = dataSource.getConnection()) {
            return single(c, sql);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the database: " + e, e);
        }
    }

    private static long single(Connection c, String sql) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql);
                ResultSet rs = s.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private record ChargeRow(
            String id,
            String scopeKey,
            long amount,
            String status,
            String downstreamKey,
            @Nullable Integer responseStatus,
            byte @Nullable [] responseBody,
            int attempts,
            int takeovers) {}

    private record EntryRow(long entries, long debits, long credits) {}
}
