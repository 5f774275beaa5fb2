package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What the database refuses even from a writer that bypasses the Java API. */
class DatabaseGuardTest extends LedgerTestSupport {

    private static final String INSERT_ENTRY = """
            INSERT INTO ledger_entry (kind, original_id, description, posted_at) VALUES (?, ?, 'raw', ?) RETURNING id
            """;
    private static final String INSERT_POSTING = """
            INSERT INTO ledger_posting (entry_id, line, account_id, currency, side, amount, posted_at, pending)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """;
    private static final OffsetDateTime AT = OffsetDateTime.of(2026, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);

    private Account cash;
    private Account revenue;

    @BeforeEach
    void accounts() {
        cash = open("cash", AccountType.ASSET);
        revenue = open("revenue", AccountType.REVENUE);
    }

    private static long rawEntry(Connection c) throws SQLException {
        return rawEntry(c, "standard", null);
    }

    private static long rawEntry(Connection c, String kind, Long originalId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT_ENTRY)) {
            ps.setString(1, kind);
            ps.setObject(2, originalId);
            ps.setObject(3, AT);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void rawPosting(
            Connection c, long entry, int line, long account, String currency, String side, long amount)
            throws SQLException {
        rawPosting(c, entry, line, account, currency, side, amount, false);
    }

    private static void rawPosting(
            Connection c,
            long entry,
            int line,
            long account,
            String currency,
            String side,
            long amount,
            boolean pending)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT_POSTING)) {
            ps.setLong(1, entry);
            ps.setInt(2, line);
            ps.setLong(3, account);
            ps.setString(4, currency);
            ps.setString(5, side);
            ps.setLong(6, amount);
            ps.setObject(7, AT);
            ps.setBoolean(8, pending);
            ps.executeUpdate();
        }
    }

    private int entryCount() {
        return ledger.entries(EntryQuery.first(1000)).entries().size();
    }

    @Test
    void aBalancedRawEntryCommits() throws Exception {
        try (Connection c = connection()) {
            long entry = rawEntry(c);
            rawPosting(c, entry, 1, cash.id(), "USD", "debit", 100);
            rawPosting(c, entry, 2, revenue.id(), "USD", "credit", 100);
            c.commit();
        }
        assertThat(entryCount()).isEqualTo(1);
    }

    @Test
    void anUnbalancedRawEntryFailsAtCommit() throws Exception {
        try (Connection c = connection()) {
            long entry = rawEntry(c);
            rawPosting(c, entry, 1, cash.id(), "USD", "debit", 100);
            rawPosting(c, entry, 2, revenue.id(), "USD", "credit", 99);
            // every statement succeeded: the check is deferred to the commit
            assertThatThrownBy(c::commit)
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("does not balance in USD")
                    .extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("LG005");
        }
        assertThat(entryCount()).isZero();
    }

    @Test
    void aRawEntryBalancedOnlyAcrossCurrenciesFailsAtCommit() throws Exception {
        Account euros = ledger.openAccount(AccountSpec.of("euros", AccountType.REVENUE, EUR));
        try (Connection c = connection()) {
            long entry = rawEntry(c);
            rawPosting(c, entry, 1, cash.id(), "USD", "debit", 100);
            rawPosting(c, entry, 2, euros.id(), "EUR", "credit", 100);
            assertThatThrownBy(c::commit).hasMessageContaining("does not balance in EUR, USD");
        }
        assertThat(entryCount()).isZero();
    }

    @Test
    void aRawEntryWithOneOrNoPostingFailsAtCommit() throws Exception {
        try (Connection c = connection()) {
            long entry = rawEntry(c);
            rawPosting(c, entry, 1, cash.id(), "USD", "debit", 100);
            assertThatThrownBy(c::commit).hasMessageContaining("at least 2 are required");
        }
        try (Connection c = connection()) {
            rawEntry(c);
            assertThatThrownBy(c::commit).hasMessageContaining("has 0 posting(s)");
        }
        assertThat(entryCount()).isZero();
    }

    @Test
    void theDeferredCheckAlsoTranslatesThroughTheApi() {
        // the same guard seen through the ledger's own transaction template
        assertThatThrownBy(() -> dev.exactly.ledger.internal.Jdbc.inTransaction(dataSource, c -> {
                    long entry = rawEntry(c);
                    rawPosting(c, entry, 1, cash.id(), "USD", "debit", 100);
                    rawPosting(c, entry, 2, revenue.id(), "USD", "credit", 1);
                    return entry;
                }))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.code()).isEqualTo("ledger_unbalanced"));
    }

    @Test
    void postingsCanNotBeAddedToAnEntryOfAnotherTransaction() throws Exception {
        JournalEntry committed = ledger.post(transfer(cash, revenue, 100));
        try (Connection c = connection()) {
            // balanced on its own, but it would change an immutable entry
            assertThatThrownBy(() -> {
                        rawPosting(c, committed.id(), 3, cash.id(), "USD", "debit", 5);
                        rawPosting(c, committed.id(), 4, revenue.id(), "USD", "credit", 5);
                    })
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("same transaction");
            c.rollback();
        }
        assertThat(ledger.entry(committed.id()).orElseThrow().postings()).hasSize(2);
    }

    @Test
    void aRawPostingInAnotherCurrencyThanItsAccountIsRefused() throws Exception {
        try (Connection c = connection()) {
            long entry = rawEntry(c);
            assertThatThrownBy(() -> rawPosting(c, entry, 1, cash.id(), "EUR", "debit", 100))
                    .isInstanceOf(SQLException.class)
                    .extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("LG003");
            c.rollback();
            long again = rawEntry(c);
            assertThatThrownBy(() -> rawPosting(c, again, 1, 987_654, "USD", "debit", 100))
                    .extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("LG002");
            c.rollback();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"ledger_posting_side_check", "ledger_posting_amount_check"})
    void aRawPostingWithAnotherSideOrNoAmountIsRefusedByItsStatement(String rule) throws Exception {
        boolean side = rule.equals("ledger_posting_side_check");
        try (Connection c = connection()) {
            long entry = rawEntry(c);
            assertThatThrownBy(() -> rawPosting(c, entry, 1, cash.id(), "USD", side ? "both" : "debit", side ? 100 : 0))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("violates check constraint \"" + rule + "\"")
                    .extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("23514");
            c.rollback();
        }
        assertThat(entryCount()).isZero();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "ledger_entry_kind_check",
                "ledger_entry_link_check",
                "ledger_entry_external_ref_check",
                "ledger_entry_description_check"
            })
    void aRawEntryBreakingARowRuleFailsAtCommit(String rule) throws Exception {
        String sql = switch (rule) {
            case "ledger_entry_kind_check" ->
                "INSERT INTO ledger_entry (kind, posted_at) VALUES ('gift', ?) RETURNING id";
            case "ledger_entry_link_check" ->
                "INSERT INTO ledger_entry (kind, original_id, posted_at) VALUES ('standard', 1, ?) RETURNING id";
            case "ledger_entry_external_ref_check" ->
                "INSERT INTO ledger_entry (kind, external_ref, posted_at) VALUES ('standard', '', ?) RETURNING id";
            default ->
                "INSERT INTO ledger_entry (kind, description, posted_at) VALUES ('standard', repeat('x', 1001), ?) RETURNING id";
        };
        try (Connection c = connection()) {
            long entry;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setObject(1, AT);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    entry = rs.getLong(1);
                }
            }
            // balanced: only the row rule is broken
            rawPosting(c, entry, 1, cash.id(), "USD", "debit", 100);
            rawPosting(c, entry, 2, revenue.id(), "USD", "credit", 100);
            assertThatThrownBy(c::commit)
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("violates check constraint \"" + rule + "\"")
                    .extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("23514");
        }
        assertThat(entryCount()).isZero();
    }

    /** Each kind's link to an original entry, broken in an entry that is otherwise sound (one balance group). */
    @ParameterizedTest
    @ValueSource(strings = {"standard", "pending", "reversal", "refund"})
    void aRawEntryWithTheWrongLinkForItsKindFailsAtCommit(String kind) throws Exception {
        boolean linked = kind.equals("standard") || kind.equals("pending");
        boolean pending = kind.equals("pending");
        JournalEntry original = ledger.post(transfer(cash, revenue, 100));
        try (Connection c = connection()) {
            long entry = rawEntry(c, kind, linked ? original.id() : null);
            rawPosting(c, entry, 1, cash.id(), "USD", "debit", 100, pending);
            rawPosting(c, entry, 2, revenue.id(), "USD", "credit", 100, pending);
            assertThatThrownBy(c::commit)
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("violates check constraint \"ledger_entry_link_check\"")
                    .extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("23514");
        }
        assertThat(entryCount()).isEqualTo(1);
    }

    @Test
    void soundRawEntriesOfEveryKindWithOneBalanceGroupCommit() throws Exception {
        JournalEntry original = ledger.post(transfer(cash, revenue, 100));
        commitRaw("reversal", original.id(), cash, "credit", 100L, false, revenue, "debit", 100L, false);
        commitRaw("refund", original.id(), cash, "credit", 40L, false, revenue, "debit", 40L, false);
        commitRaw(
                "adjustment",
                null,
                cash,
                "debit",
                7L,
                false,
                revenue,
                "credit",
                3L,
                false,
                revenue,
                "credit",
                4L,
                false);
        commitRaw("pending", null, cash, "debit", 100L, true, revenue, "credit", 100L, true);
        assertThat(entryCount()).isEqualTo(5);
        // one currency, posted, but off by one
        assertThatThrownBy(() -> commitRaw("adjustment", null, cash, "debit", 7L, false, revenue, "credit", 6L, false))
                .hasMessageContaining("does not balance in USD")
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("LG005");
        assertThat(entryCount()).isEqualTo(5);
    }

    @Test
    void theWriteFunctionRefusesUnsortedUnshardedAccounts() throws Exception {
        try (Connection c = connection();
                Statement s = c.createStatement()) {
            // two unsharded accounts in descending id order: the locks must be taken in ascending order
            assertThatThrownBy(
                            () -> s.execute("SELECT * FROM ledger_write_entry('standard', NULL, NULL, '', now(), ARRAY["
                                    + cash.id() + ", " + revenue.id()
                                    + "], ARRAY['USD', 'USD'], ARRAY['debit', 'credit'], "
                                    + "ARRAY[100, 100]::bigint[], ARRAY[false, false], ARRAY["
                                    + Math.max(cash.id(), revenue.id()) + ", "
                                    + Math.min(cash.id(), revenue.id())
                                    + "]::bigint[], ARRAY[100, -100]::bigint[], ARRAY[0, 0]::bigint[], "
                                    + "ARRAY[0, 0]::bigint[], ARRAY[]::bigint[], ARRAY[]::bigint[], ARRAY[]::bigint[], ARRAY[]::bigint[], "
                                    + "ARRAY[]::integer[])"))
                    .extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("LG008");
            c.rollback();
        }
        assertThat(entryCount()).isZero();
    }

    /** A raw pending entry of 100 from cash to revenue, committed. */
    private long rawHold() throws SQLException {
        try (Connection c = connection()) {
            long hold = rawEntry(c, "pending", null);
            rawPosting(c, hold, 1, cash.id(), "USD", "debit", 100, true);
            rawPosting(c, hold, 2, revenue.id(), "USD", "credit", 100, true);
            c.commit();
            return hold;
        }
    }

    /** Commits a raw entry of {@code kind} linked to {@code original}, with lines (account, side, amount, pending). */
    private void commitRaw(String kind, Long original, Object... lines) throws SQLException {
        try (Connection c = connection()) {
            long entry = rawEntry(c, kind, original);
            for (int i = 0; i < lines.length; i += 4) {
                rawPosting(
                        c,
                        entry,
                        i / 4 + 1,
                        ((Account) lines[i]).id(),
                        "USD",
                        (String) lines[i + 1],
                        (Long) lines[i + 2],
                        (Boolean) lines[i + 3]);
            }
            c.commit();
        }
    }

    @Test
    void rawPendingLinesMustBalanceByThemselvesAndBelongToTwoPhaseEntries() throws Exception {
        // balanced overall, but the pending line and the posted line each stand alone
        assertThatThrownBy(() -> commitRaw("pending", null, cash, "debit", 100L, true, revenue, "credit", 100L, false))
                .hasMessageContaining("does not balance in USD, pending USD")
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("LG005");
        assertThatThrownBy(() -> commitRaw("standard", null, cash, "debit", 100L, true, revenue, "credit", 100L, true))
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("LG007");
        assertThatThrownBy(() -> commitRaw("pending", null, cash, "debit", 100L, false, revenue, "credit", 100L, false))
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("LG007");
        assertThat(entryCount()).isZero();
    }

    @Test
    void aRawResolutionMustReleaseExactlyWhatItsHoldHoldsAndCaptureNoMore() throws Exception {
        long hold = rawHold();
        JournalEntry standard = ledger.post(transfer(cash, revenue, 100));
        // releases only part of the hold
        assertThatThrownBy(() -> commitRaw("void", hold, cash, "credit", 60L, true, revenue, "debit", 60L, true))
                .hasMessageContaining("does not release exactly")
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("LG007");
        // captures more than it holds
        assertThatThrownBy(() -> commitRaw(
                        "capture", hold, cash, "credit", 100L, true, revenue, "debit", 100L, true, cash, "debit", 101L,
                        false, revenue, "credit", 101L, false))
                .hasMessageContaining("more to account")
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("LG007");
        // resolves an entry that is not pending
        assertThatThrownBy(() ->
                        commitRaw("void", standard.id(), cash, "credit", 100L, true, revenue, "debit", 100L, true))
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("LG007");
        commitRaw("void", hold, cash, "credit", 100L, true, revenue, "debit", 100L, true);
        // and only once
        assertThatThrownBy(() -> commitRaw(
                        "capture", hold, cash, "credit", 100L, true, revenue, "debit", 100L, true, cash, "debit", 100L,
                        false, revenue, "credit", 100L, false))
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("23505");
        assertThat(ledger.linkedEntries(hold)).hasSize(1);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "UPDATE ledger_posting SET amount = amount + 1",
                "DELETE FROM ledger_posting",
                "TRUNCATE ledger_posting",
                "UPDATE ledger_entry SET description = 'changed'",
                "DELETE FROM ledger_entry",
                "TRUNCATE ledger_entry CASCADE",
                "UPDATE ledger_account SET currency = 'EUR'",
                "DELETE FROM ledger_account",
                "UPDATE ledger_balance SET floor_minor = -100",
                "DELETE FROM ledger_balance",
                "TRUNCATE ledger_open_hold"
            })
    void entriesPostingsAndAccountsAreImmutable(String sql) throws Exception {
        JournalEntry entry = ledger.post(transfer(cash, revenue, 100));
        try (Connection c = connection();
                Statement s = c.createStatement()) {
            assertThatThrownBy(() -> s.execute(sql))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("is not allowed")
                    .extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("LG010");
            c.rollback();
        }
        assertThat(ledger.entry(entry.id())).contains(entry);
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(100));
    }

    @Test
    void aBalanceRowCanNotBeWrittenBelowItsFloor() throws Exception {
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        try (Connection c = connection();
                PreparedStatement ps =
                        c.prepareStatement("UPDATE ledger_balance SET balance = -1 WHERE account_id = ?")) {
            ps.setLong(1, wallet.id());
            assertThatThrownBy(ps::executeUpdate)
                    .extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("23514");
            c.rollback();
        }
    }
}
