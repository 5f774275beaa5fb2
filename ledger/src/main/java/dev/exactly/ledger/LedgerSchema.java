package dev.exactly.ledger;

import dev.exactly.ledger.internal.Jdbc;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The ledger's schema, shipped as the Flyway-style migrations {@value #MIGRATION_RESOURCE},
 * {@value #PENDING_MIGRATION_RESOURCE}, {@value #LIGHTER_WRITES_MIGRATION_RESOURCE},
 * {@value #CHEAPER_CHECKS_MIGRATION_RESOURCE}, {@value #NO_FUNCTION_SEARCH_PATH_MIGRATION_RESOURCE} and
 * {@value #POSTINGS_CHECK_BY_KEY_MIGRATION_RESOURCE} (plain SQL, unqualified
 * {@code ledger_*} names, created in the connection's current schema). An application that runs Flyway adds the location
 * {@value #FLYWAY_LOCATION}; tests and simple applications call {@link #migrate(DataSource)}.
 */
public final class LedgerSchema {

    /** The classpath resource of the version 1 migration: accounts, balances, entries, postings. */
    public static final String MIGRATION_RESOURCE = "db/ledger/V1__ledger.sql";

    /** The classpath resource of the version 2 migration: two-phase (pending) entries. */
    public static final String PENDING_MIGRATION_RESOURCE = "db/ledger/V2__pending_entries.sql";

    /**
     * The classpath resource of the version 3 migration: the same rules with less work per entry (the write
     * function without a plan per call, the row rules checked by the triggers).
     */
    public static final String LIGHTER_WRITES_MIGRATION_RESOURCE = "db/ledger/V3__lighter_writes.sql";

    /**
     * The classpath resource of the version 4 migration: the same rules, checked with less work when they hold
     * (each rule trigger asks one cheap question first).
     */
    public static final String CHEAPER_CHECKS_MIGRATION_RESOURCE = "db/ledger/V4__cheaper_checks.sql";

    /**
     * The classpath resource of the version 5 migration: the write and rule functions name the ledger's tables
     * with their schema instead of carrying a search_path of their own.
     */
    public static final String NO_FUNCTION_SEARCH_PATH_MIGRATION_RESOURCE = "db/ledger/V5__no_function_search_path.sql";

    /**
     * The classpath resource of the version 6 migration: the postings' statement trigger probes each posting's
     * entry and account by key, whatever the planner knew of the tables when it planned the check.
     */
    public static final String POSTINGS_CHECK_BY_KEY_MIGRATION_RESOURCE = "db/ledger/V6__postings_check_by_key.sql";

    /** The Flyway location holding the ledger's migrations. */
    public static final String FLYWAY_LOCATION = "classpath:db/ledger";

    /** Every migration in order, each with a query that says whether it ran in the current schema. */
    private static final List<Map.Entry<String, String>> MIGRATIONS = List.of(
            Map.entry(MIGRATION_RESOURCE, tablePresent("ledger_entry")),
            Map.entry(PENDING_MIGRATION_RESOURCE, tablePresent("ledger_open_hold")),
            // version 3 dropped the CHECK constraints that its triggers check
            Map.entry(LIGHTER_WRITES_MIGRATION_RESOURCE, """
                    SELECT NOT EXISTS (
                        SELECT 1 FROM pg_catalog.pg_constraint
                        WHERE conname = 'ledger_posting_side_check'
                          AND connamespace = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = current_schema())
                    )
                    """),
            // version 4 comments the entry trigger's function it replaces
            Map.entry(CHEAPER_CHECKS_MIGRATION_RESOURCE, """
                    SELECT coalesce(pg_catalog.obj_description(
                               pg_catalog.to_regprocedure(pg_catalog.quote_ident(current_schema()) || '.ledger_check_entry_balanced()'),
                               'pg_proc'), '') = 'ledger schema version 4'
                    """),
            // version 5 comments the write function it replaces
            Map.entry(NO_FUNCTION_SEARCH_PATH_MIGRATION_RESOURCE, """
                    SELECT coalesce(pg_catalog.obj_description(
                               (SELECT p.oid FROM pg_catalog.pg_proc p
                                WHERE p.proname = 'ledger_write_entry'
                                  AND p.pronamespace = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = current_schema())),
                               'pg_proc'), '') = 'ledger schema version 5'
                    """),
            // version 6 comments the postings' trigger function it replaces
            Map.entry(POSTINGS_CHECK_BY_KEY_MIGRATION_RESOURCE, """
                    SELECT coalesce(pg_catalog.obj_description(
                               pg_catalog.to_regprocedure(pg_catalog.quote_ident(current_schema()) || '.ledger_check_new_postings()'),
                               'pg_proc'), '') = 'ledger schema version 6'
                    """));

    /** One migration at a time per schema. */
    private static final String MIGRATION_LOCK = """
            SELECT pg_advisory_xact_lock(hashtext('dev.exactly.ledger:' || current_schema()))
            """;

    private static String tablePresent(String table) {
        return """
                SELECT EXISTS (
                    SELECT 1 FROM pg_catalog.pg_tables
                    WHERE schemaname = current_schema() AND tablename = '%s'
                )
                """.formatted(table);
    }

    private LedgerSchema() {}

    /** The SQL text of every migration, in order: what creates the whole schema in an empty one. */
    public static String migrationSql() {
        StringBuilder sql = new StringBuilder();
        for (Map.Entry<String, String> migration : MIGRATIONS) {
            sql.append(migrationSql(migration.getKey())).append('\n');
        }
        return sql.toString();
    }

    /** The SQL text of one migration resource, e.g. {@link #PENDING_MIGRATION_RESOURCE}. */
    public static String migrationSql(String resource) {
        try (InputStream in = LedgerSchema.class.getResourceAsStream("/" + resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Runs the ledger's migrations that have not run in the current schema of {@code dataSource}'s
     * connections (a schema of version 1 gets versions 2 to 6), in one transaction under an advisory lock (so
     * concurrent callers run them once).
     *
     * @return whether this call ran any migration
     * @throws LedgerException when the database refuses
     */
    public static boolean migrate(DataSource dataSource) {
        return Jdbc.inTransaction(dataSource, c -> {
            try (Statement s = c.createStatement()) {
                s.execute(MIGRATION_LOCK);
            }
            boolean ran = false;
            for (Map.Entry<String, String> migration : MIGRATIONS) {
                if (!ran(c, migration.getValue())) {
                    try (Statement s = c.createStatement()) {
                        s.execute(migrationSql(migration.getKey()));
                    }
                    ran = true;
                }
            }
            return ran;
        });
    }

    private static boolean ran(Connection c, String query) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(query)) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
