package dev.exactly.benchmarks.payments;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The service's books after a run, read from its schema and from the processor stand-in: charges by
 * status, journal entries, the trial balance per currency, and the processor's captures.
 *
 * @param succeeded      charges that succeeded
 * @param customers      distinct customers charged
 * @param unfinished     charges in any other state (pending, failed, dead-lettered): none are expected
 * @param chargedAmount  the sum of the succeeded charges' amounts
 * @param chargeEntries  journal entries with a charge's reference
 * @param linkedEntries  distinct journal entries the succeeded charges name
 * @param captures       captures the processor counted
 * @param trialBalance   per currency, {debits, credits}
 */
record Books(
        long succeeded,
        long customers,
        long unfinished,
        long chargedAmount,
        long chargeEntries,
        long linkedEntries,
        long captures,
        Map<String, long[]> trialBalance) {
    private static final Pattern CAPTURES = Pattern.compile("\"captures\"\\s*:\\s*(\\d+)");

    Books {
        trialBalance = Map.copyOf(trialBalance);
    }

    /** Reads the books of the service in {@code schema}; {@code processorStats} is the stand-in's {@code /v1/stats}. */
    static Books read(String jdbcUrl, String schema, String processorStats) throws SQLException {
        Matcher captures = CAPTURES.matcher(processorStats);
        if (!captures.find()) {
            throw new IllegalStateException("no captures in the processor's statistics: " + processorStats);
        }
        try (Connection c = DriverManager.getConnection(jdbcUrl)) {
            long succeeded = 0;
            long unfinished = 0;
            long amount = 0;
            try (ResultSet rs = query(
                    c,
                    "SELECT status, count(*), coalesce(sum(amount), 0) FROM " + schema
                            + ".payments_charge GROUP BY status")) {
                while (rs.next()) {
                    if (rs.getString(1).equals("succeeded")) {
                        succeeded = rs.getLong(2);
                        amount = rs.getLong(3);
                    } else {
                        unfinished += rs.getLong(2);
                    }
                }
            }
            long customers = single(c, "SELECT count(DISTINCT customer) FROM " + schema + ".payments_charge");
            long entries =
                    single(c, "SELECT count(*) FROM " + schema + ".ledger_entry WHERE external_ref LIKE 'charge:%'");
            long linked = single(
                    c,
                    "SELECT count(DISTINCT ledger_entry_id) FROM " + schema
                            + ".payments_charge WHERE status = 'succeeded'");
            Map<String, long[]> trial = new TreeMap<>();
            try (ResultSet rs = query(
                    c,
                    "SELECT currency, coalesce(sum(amount) FILTER (WHERE side = 'debit'), 0), "
                            + "coalesce(sum(amount) FILTER (WHERE side = 'credit'), 0) FROM " + schema
                            + ".ledger_posting GROUP BY currency")) {
                while (rs.next()) {
                    trial.put(rs.getString(1), new long[] {rs.getLong(2), rs.getLong(3)});
                }
            }
            return new Books(
                    succeeded,
                    customers,
                    unfinished,
                    amount,
                    entries,
                    linked,
                    Long.parseLong(captures.group(1)),
                    trial);
        }
    }

    /** Charges not yet finished (the run waits for none before reading the books). */
    static long pending(String jdbcUrl, String schema) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl)) {
            return single(c, "SELECT count(*) FROM " + schema + ".payments_charge WHERE status = 'pending'");
        }
    }

    /**
     * What is wrong with these books for a run whose load generator counted {@code answered} good answers
     * and may have cut off up to {@code cutOff} requests unanswered (one per connection per phase): nothing,
     * if one charge is one capture is one journal entry, every answered charge is there, and the ledger
     * balances; and the load spread over the run's {@code runCustomers} (round robin: once there are four times
     * as many charges, every customer has some).
     */
    List<String> problems(long answered, long cutOff, int runCustomers) {
        List<String> problems = new ArrayList<>();
        if (succeeded >= 4L * runCustomers && customers != runCustomers) {
            problems.add(succeeded + " charges went to " + customers + " customers, not to all " + runCustomers);
        }
        if (succeeded != captures) {
            problems.add(succeeded + " succeeded charges but " + captures + " processor captures");
        }
        if (succeeded != chargeEntries || succeeded != linkedEntries) {
            problems.add(succeeded + " succeeded charges but " + chargeEntries + " charge journal entries ("
                    + linkedEntries + " named by the charges)");
        }
        if (unfinished != 0) {
            problems.add(unfinished + " charges not succeeded (pending, failed or dead-lettered)");
        }
        if (succeeded < answered || succeeded > answered + cutOff) {
            problems.add(succeeded + " succeeded charges for " + answered + " good answers (at most " + cutOff
                    + " requests cut off unanswered)");
        }
        if (trialBalance.isEmpty() && succeeded > 0) {
            problems.add("no postings in the ledger");
        }
        trialBalance.forEach((currency, sides) -> {
            if (sides[0] != sides[1]) {
                problems.add("trial balance of " + currency + " off: debits " + sides[0] + ", credits " + sides[1]);
            }
        });
        long[] usd = trialBalance.get("USD");
        if (usd != null && usd[0] != chargedAmount) {
            problems.add("USD debits " + usd[0] + " but the succeeded charges amount to " + chargedAmount);
        }
        return problems;
    }

    private static ResultSet query(Connection c, String sql) throws SQLException {
        PreparedStatement statement = c.prepareStatement(sql);
        statement.closeOnCompletion();
        return statement.executeQuery();
    }

    private static long single(Connection c, String sql) throws SQLException {
        try (ResultSet rs = query(c, sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
