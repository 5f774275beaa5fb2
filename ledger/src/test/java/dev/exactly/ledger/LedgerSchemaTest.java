package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class LedgerSchemaTest {

    @Test
    void migrateCreatesTheTablesOnceEvenWhenCalledConcurrently() throws Exception {
        try (HikariDataSource ds = LedgerTestSupport.pooled(TestPostgres.freshSchema("ledger_schema"), 6)) {
            List<Boolean> created = LedgerTestSupport.concurrently(4, t -> () -> LedgerSchema.migrate(ds));
            assertThat(created).containsOnlyOnce(true);
            assertThat(LedgerSchema.migrate(ds)).isFalse();
        }
    }

    @Test
    void theMigrationIsShippedAsAFlywayStyleResource() {
        assertThat(LedgerSchema.migrationSql())
                .contains(
                        "CREATE TABLE ledger_account",
                        "CREATE TABLE ledger_balance",
                        "CREATE TABLE ledger_entry",
                        "CREATE TABLE ledger_posting",
                        "CREATE TABLE ledger_open_hold")
                .doesNotContain("ledger.ledger_", "public.");
        assertThat(LedgerSchema.class.getResource("/db/ledger/V1__ledger.sql")).isNotNull();
        assertThat(LedgerSchema.class.getResource("/db/ledger/V2__pending_entries.sql"))
                .isNotNull();
        assertThat(LedgerSchema.class.getResource("/" + LedgerSchema.LIGHTER_WRITES_MIGRATION_RESOURCE))
                .isNotNull();
        assertThat(LedgerSchema.class.getResource("/" + LedgerSchema.CHEAPER_CHECKS_MIGRATION_RESOURCE))
                .isNotNull();
    }

    @Test
    void aVersionOneSchemaWithEntriesIsUpgradedInPlace() throws Exception {
        try (HikariDataSource ds = LedgerTestSupport.pooled(TestPostgres.freshSchema("ledger_upgrade"), 2)) {
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement()) {
                s.execute(LedgerSchema.migrationSql(LedgerSchema.MIGRATION_RESOURCE));
            }
            Ledger ledger = Ledger.of(ds);
            Account cash = ledger.openAccount(AccountSpec.of("cash", AccountType.ASSET, Currency.of("USD")));
            Account wallet = ledger.openAccount(AccountSpec.of("wallet", AccountType.LIABILITY, Currency.of("USD"))
                    .withFloor(0));
            // an entry written by version 1's write function
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement()) {
                s.execute("SELECT * FROM ledger_post_entry('standard', NULL, 'v1', '', now(), ARRAY[" + cash.id() + ", "
                        + wallet.id()
                        + "], ARRAY['USD', 'USD'], ARRAY['debit', 'credit'], ARRAY[500, 500]::bigint[], ARRAY["
                        + cash.id() + ", " + wallet.id() + "], ARRAY[500, 500]::bigint[], ARRAY[]::bigint[], "
                        + "ARRAY[]::bigint[], ARRAY[]::integer[])");
            }

            assertThat(LedgerSchema.migrate(ds)).isTrue();
            assertThat(LedgerSchema.migrate(ds)).isFalse();
            JournalEntry old = ledger.entryByExternalRef("v1").orElseThrow();
            assertThat(old.postings()).noneMatch(Posting::pending);
            assertThat(ledger.balances(wallet.id()))
                    .isEqualTo(new AccountBalance(Money.of(500, "USD"), Money.of(0, "USD"), Money.of(0, "USD")));
            JournalEntry hold = ledger.hold(EntryRequest.builder()
                    .debit(wallet.id(), Money.of(300, "USD"))
                    .credit(cash.id(), Money.of(300, "USD"))
                    .build());
            assertThatThrownBy(() -> ledger.post(EntryRequest.builder()
                            .debit(wallet.id(), Money.of(201, "USD"))
                            .credit(cash.id(), Money.of(201, "USD"))
                            .build()))
                    .isInstanceOf(BalanceFloorException.class);
            ledger.capture(hold.id(), null, "");
            assertThat(ledger.balance(wallet.id())).isEqualTo(Money.of(200, "USD"));
            assertThat(ledger.trialBalance().isBalanced()).isTrue();
        }
    }

    @Test
    void aVersionThreeSchemaWithEntriesIsUpgradedToVersionFourInPlace() throws Exception {
        try (HikariDataSource ds = LedgerTestSupport.pooled(TestPostgres.freshSchema("ledger_upgrade4"), 2)) {
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement()) {
                s.execute(LedgerSchema.migrationSql(LedgerSchema.MIGRATION_RESOURCE));
                s.execute(LedgerSchema.migrationSql(LedgerSchema.PENDING_MIGRATION_RESOURCE));
                s.execute(LedgerSchema.migrationSql(LedgerSchema.LIGHTER_WRITES_MIGRATION_RESOURCE));
            }
            Ledger ledger = Ledger.of(ds);
            Account cash = ledger.openAccount(AccountSpec.of("cash", AccountType.ASSET, Currency.of("USD")));
            Account wallet = ledger.openAccount(AccountSpec.of("wallet", AccountType.LIABILITY, Currency.of("USD"))
                    .withFloor(0));
            JournalEntry before = ledger.post(EntryRequest.builder()
                    .debit(cash.id(), Money.of(500, "USD"))
                    .credit(wallet.id(), Money.of(500, "USD"))
                    .externalRef("v3")
                    .build());

            assertThat(LedgerSchema.migrate(ds)).isTrue();
            assertThat(LedgerSchema.migrate(ds)).isFalse();
            assertThat(ledger.entryByExternalRef("v3").orElseThrow().id()).isEqualTo(before.id());
            JournalEntry hold = ledger.hold(EntryRequest.builder()
                    .debit(wallet.id(), Money.of(300, "USD"))
                    .credit(cash.id(), Money.of(300, "USD"))
                    .build());
            ledger.capture(hold.id(), null, "");
            assertThat(ledger.balance(wallet.id())).isEqualTo(Money.of(200, "USD"));
            // the rules still hold after the upgrade: an unbalanced raw entry does not commit
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute(
                        "INSERT INTO ledger_entry (id, kind, posted_at) OVERRIDING SYSTEM VALUE VALUES (9999, 'standard', now())");
                s.execute("INSERT INTO ledger_posting (entry_id, line, account_id, currency, side, amount, posted_at) "
                        + "SELECT 9999, 1, " + cash.id()
                        + ", 'USD', 'debit', 5, posted_at FROM ledger_entry WHERE id = 9999");
                s.execute("INSERT INTO ledger_posting (entry_id, line, account_id, currency, side, amount, posted_at) "
                        + "SELECT 9999, 2, " + wallet.id()
                        + ", 'USD', 'credit', 4, posted_at FROM ledger_entry WHERE id = 9999");
                assertThatThrownBy(c::commit)
                        .extracting(e -> ((java.sql.SQLException) e).getSQLState())
                        .isEqualTo("LG005");
            }
            assertThat(ledger.trialBalance().isBalanced()).isTrue();
        }
    }

    @Test
    void aVersionFourSchemaWithEntriesIsUpgradedToFunctionsWithoutASearchPathOfTheirOwn() throws Exception {
        try (HikariDataSource ds = LedgerTestSupport.pooled(TestPostgres.freshSchema("ledger_upgrade5"), 2)) {
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement()) {
                s.execute(LedgerSchema.migrationSql(LedgerSchema.MIGRATION_RESOURCE));
                s.execute(LedgerSchema.migrationSql(LedgerSchema.PENDING_MIGRATION_RESOURCE));
                s.execute(LedgerSchema.migrationSql(LedgerSchema.LIGHTER_WRITES_MIGRATION_RESOURCE));
                s.execute(LedgerSchema.migrationSql(LedgerSchema.CHEAPER_CHECKS_MIGRATION_RESOURCE));
            }
            Ledger ledger = Ledger.of(ds);
            Account cash = ledger.openAccount(AccountSpec.of("cash", AccountType.ASSET, Currency.of("USD")));
            Account wallet = ledger.openAccount(AccountSpec.of("wallet", AccountType.LIABILITY, Currency.of("USD"))
                    .withFloor(0));
            Account euros = ledger.openAccount(AccountSpec.of("euros", AccountType.ASSET, Currency.of("EUR")));
            JournalEntry before = ledger.post(EntryRequest.builder()
                    .debit(cash.id(), Money.of(500, "USD"))
                    .credit(wallet.id(), Money.of(500, "USD"))
                    .externalRef("v4")
                    .build());
            assertThat(configuredFunctions(ds))
                    .as("version 4's functions set their search_path")
                    .containsExactlyInAnyOrder(
                            "ledger_check_entry_balanced", "ledger_check_new_postings", "ledger_write_entry");

            assertThat(LedgerSchema.migrate(ds)).isTrue();
            assertThat(LedgerSchema.migrate(ds)).isFalse();
            assertThat(configuredFunctions(ds)).isEmpty();
            assertThat(ledger.entryByExternalRef("v4").orElseThrow().id()).isEqualTo(before.id());

            String schema;
            try (Connection c = ds.getConnection()) {
                schema = c.getSchema();
            }
            // a connection whose search_path has none of the ledger's tables: the write, the postings' trigger
            // and the deferred check find them, and refuse what they refused before with the same SQLSTATEs
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("SET LOCAL search_path = pg_catalog");
                s.execute("SELECT * FROM \"" + schema + "\".ledger_write_entry('standard', NULL, 'v5', '', now(), "
                        + "ARRAY[" + cash.id() + ", " + wallet.id()
                        + "], '{USD,USD}', '{debit,credit}', '{70,70}', '{f,f}', "
                        + "ARRAY[" + cash.id() + ", " + wallet.id() + "], '{70,70}', '{0,0}', '{0,0}', "
                        + "'{}', '{}', '{}', '{}', '{}')");
                c.commit();
                s.execute("SET LOCAL search_path = pg_catalog");
                s.execute(
                        "INSERT INTO \"" + schema
                                + "\".ledger_entry (id, kind, posted_at) OVERRIDING SYSTEM VALUE VALUES (9998, 'standard', now())");
                assertThatThrownBy(() -> s.execute("INSERT INTO \"" + schema + "\".ledger_posting "
                                + "(entry_id, line, account_id, currency, side, amount, posted_at) "
                                + "SELECT 9998, 1, " + euros.id() + ", 'USD', 'debit', 5, posted_at FROM \"" + schema
                                + "\".ledger_entry WHERE id = 9998"))
                        .extracting(e -> ((java.sql.SQLException) e).getSQLState())
                        .isEqualTo("LG003");
                c.rollback();
                s.execute("SET LOCAL search_path = pg_catalog");
                s.execute(
                        "INSERT INTO \"" + schema
                                + "\".ledger_entry (id, kind, posted_at) OVERRIDING SYSTEM VALUE VALUES (9999, 'standard', now())");
                s.execute("INSERT INTO \"" + schema
                        + "\".ledger_posting (entry_id, line, account_id, currency, side, amount, posted_at) "
                        + "SELECT 9999, 1, " + cash.id() + ", 'USD', 'debit', 5, posted_at FROM \"" + schema
                        + "\".ledger_entry WHERE id = 9999");
                assertThatThrownBy(c::commit)
                        .extracting(e -> ((java.sql.SQLException) e).getSQLState())
                        .isEqualTo("LG004");
            }
            assertThat(ledger.entryByExternalRef("v5")).isPresent();
            assertThat(ledger.balance(wallet.id())).isEqualTo(Money.of(570, "USD"));
            assertThat(ledger.trialBalance().isBalanced()).isTrue();
        }
    }

    @Test
    void thePostingsCheckProbesAccountsByKeyAfterTheLedgerGrewUnderAPlanMadeWhenItWasSmall() throws Exception {
        // one connection each: the postings' trigger plans its check at the first entry, when the ledger has
        // three accounts and no statistics (autovacuum off for its tables), and keeps that plan while it grows
        try (HikariDataSource v5 = LedgerTestSupport.pooled(TestPostgres.freshSchema("ledger_probe5"), 1);
                HikariDataSource v6 = LedgerTestSupport.pooled(TestPostgres.freshSchema("ledger_probe6"), 1)) {
            try (Connection c = v5.getConnection();
                    Statement s = c.createStatement()) {
                for (String resource : List.of(
                        LedgerSchema.MIGRATION_RESOURCE,
                        LedgerSchema.PENDING_MIGRATION_RESOURCE,
                        LedgerSchema.LIGHTER_WRITES_MIGRATION_RESOURCE,
                        LedgerSchema.CHEAPER_CHECKS_MIGRATION_RESOURCE,
                        LedgerSchema.NO_FUNCTION_SEARCH_PATH_MIGRATION_RESOURCE)) {
                    s.execute(LedgerSchema.migrationSql(resource));
                }
            }
            LedgerSchema.migrate(v6);
            Ledger before = smallLedgerThatGrows(v5);
            assertThat(accountScansOfOneEntry(v5, before, "grown"))
                    .as("version 5 kept the join planned for three accounts: a scan of every account per entry")
                    .isPositive();
            // the upgrade replaces the function: the same connection plans the check again at its next entry
            assertThat(LedgerSchema.migrate(v5)).isTrue();
            assertThat(LedgerSchema.migrate(v5)).isFalse();
            assertThat(accountScansOfOneEntry(v5, before, "upgraded")).isZero();

            Ledger ledger = smallLedgerThatGrows(v6);
            assertThat(accountScansOfOneEntry(v6, ledger, "grown")).isZero();
            assertThat(ledger.trialBalance().isBalanced()).isTrue();

            // the same rules: an account of another currency, an unknown account, and a posting to an entry of
            // another transaction are refused with their SQLSTATEs
            long usd = ledger.entryByExternalRef("grown")
                    .orElseThrow()
                    .postings()
                    .getFirst()
                    .accountId();
            long eur = ledger.openAccount(AccountSpec.of("euros", AccountType.ASSET, Currency.of("EUR")))
                    .id();
            long old = ledger.entryByExternalRef("grown").orElseThrow().id();
            try (Connection c = v6.getConnection();
                    Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                String entry = "INSERT INTO ledger_entry (id, kind, posted_at) OVERRIDING SYSTEM VALUE "
                        + "VALUES (9998, 'standard', now())";
                String posting = "INSERT INTO ledger_posting (entry_id, line, account_id, currency, side, amount, "
                        + "posted_at) SELECT id, 9, %d, 'USD', 'debit', 5, posted_at FROM ledger_entry WHERE id = %d";
                s.execute(entry);
                assertThatThrownBy(() -> s.execute(posting.formatted(eur, 9998)))
                        .extracting(e -> ((java.sql.SQLException) e).getSQLState())
                        .isEqualTo("LG003");
                c.rollback();
                s.execute(entry);
                assertThatThrownBy(() -> s.execute(posting.formatted(-1, 9998)))
                        .extracting(e -> ((java.sql.SQLException) e).getSQLState())
                        .isEqualTo("LG002");
                c.rollback();
                assertThatThrownBy(() -> s.execute(posting.formatted(usd, old)))
                        .extracting(e -> ((java.sql.SQLException) e).getSQLState())
                        .isEqualTo("LG001");
                c.rollback();
            }
        }
    }

    /**
     * Three accounts and one entry on the pool's one connection (its trigger's plans made now), then 2,000
     * accounts opened at once, as a new deployment's customers arrive, with no statistics refreshed.
     */
    private static Ledger smallLedgerThatGrows(DataSource ds) throws Exception {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            for (String table : List.of("ledger_account", "ledger_balance", "ledger_entry", "ledger_posting")) {
                s.execute("ALTER TABLE " + table + " SET (autovacuum_enabled = false)");
            }
        }
        Ledger ledger = Ledger.of(ds);
        Account cash = ledger.openAccount(AccountSpec.of("cash", AccountType.ASSET, Currency.of("USD")));
        Account wallet = ledger.openAccount(AccountSpec.of("wallet", AccountType.LIABILITY, Currency.of("USD")));
        ledger.openAccount(AccountSpec.of("till", AccountType.ASSET, Currency.of("USD")));
        ledger.post(EntryRequest.builder()
                .debit(cash.id(), Money.of(5, "USD"))
                .credit(wallet.id(), Money.of(5, "USD"))
                .externalRef("small")
                .build());
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            s.execute(
                    "WITH opened AS (INSERT INTO ledger_account (code, type, normal_balance, currency, created_at) "
                            + "SELECT 'customer-' || n, 'liability', 'credit', 'USD', now() FROM generate_series(1, 2000) n "
                            + "RETURNING id) INSERT INTO ledger_balance (account_id, shard, balance) SELECT id, 0, 0 FROM opened");
        }
        return ledger;
    }

    /**
     * Writes one entry between the ledger's first two accounts through the write function (whose statements
     * touch the accounts only in the postings' trigger) and counts, in its own transaction, the sequential
     * scans of the accounts it made.
     */
    private static long accountScansOfOneEntry(DataSource ds, Ledger ledger, String reference) throws Exception {
        long cash = ledger.account("cash").orElseThrow().id();
        long wallet = ledger.account("wallet").orElseThrow().id();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            long before = accountScans(s);
            s.execute("SELECT * FROM ledger_write_entry('standard', NULL, '" + reference + "', '', now(), "
                    + "ARRAY[" + cash + ", " + wallet + "], '{USD,USD}', '{debit,credit}', '{5,5}', '{f,f}', "
                    + "ARRAY[" + cash + ", " + wallet + "], '{5,5}', '{0,0}', '{0,0}', '{}', '{}', '{}', '{}', '{}')");
            long scans = accountScans(s) - before;
            c.commit();
            return scans;
        }
    }

    /**
     * The connection's sequential scans of the accounts not yet reported to the statistics (the current
     * transaction's, and maybe earlier ones'): counted when a scan starts.
     */
    private static long accountScans(Statement s) throws Exception {
        try (java.sql.ResultSet rs = s.executeQuery(
                "SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relid = 'ledger_account'::regclass")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static List<String> configuredFunctions(DataSource ds) throws Exception {
        List<String> names = new java.util.ArrayList<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery("SELECT proname FROM pg_proc WHERE proconfig IS NOT NULL "
                        + "AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())")) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        }
        return names;
    }

    @Test
    void theTriggersKeepWorkingForConnectionsWithAnotherSearchPath() throws Exception {
        DataSource ds = TestPostgres.freshSchema("ledger_path");
        LedgerSchema.migrate(ds);
        Ledger ledger = Ledger.of(ds);
        Account cash = ledger.openAccount(AccountSpec.of("cash", AccountType.ASSET, Currency.of("USD")));
        Account revenue = ledger.openAccount(AccountSpec.of("revenue", AccountType.REVENUE, Currency.of("USD")));
        String schema;
        try (Connection c = ds.getConnection()) {
            schema = c.getSchema();
        }
        // a connection whose search_path starts elsewhere, writing through the ledger into our schema:
        // the trigger functions must still find the ledger's tables
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            JournalEntry entry = ledger.post(
                    c,
                    EntryRequest.builder()
                            .debit(cash.id(), Money.of(100, "USD"))
                            .credit(revenue.id(), Money.of(100, "USD"))
                            .build());
            try (Statement s = c.createStatement()) {
                s.execute("SET LOCAL search_path = pg_catalog");
            }
            c.commit(); // the deferred balance check runs here, with the other search_path
            assertThat(ledger.entry(entry.id())).isPresent();
        }
        assertThat(schema).startsWith("ledger_path");
    }
}
