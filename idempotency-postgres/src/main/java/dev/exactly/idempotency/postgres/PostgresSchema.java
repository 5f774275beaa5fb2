package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.StoreUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SequencedMap;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * The table of {@link PostgresIdempotencyStore}, shipped as the Flyway-style migrations
 * {@value #MIGRATION_RESOURCE}, {@value #PHASES_MIGRATION_RESOURCE}, {@value #WAITERS_MIGRATION_RESOURCE},
 * {@value #CLAIM_MIGRATION_RESOURCE}, {@value #LEASE_INDEX_MIGRATION_RESOURCE},
 * {@value #HOT_COMPLETION_MIGRATION_RESOURCE}, {@value #CLAIM_RECORD_MIGRATION_RESOURCE} and
 * {@value #PURGE_AFTER_MIGRATION_RESOURCE} (the table and its claim
 * functions are unqualified, so they land in the
 * first schema of the connection's {@code search_path}). Applications that run Flyway run the
 * same files (location {@code classpath:db/idempotency}); simple applications and tests call
 * {@link #migrate}. {@link #verify} checks, at startup, that the table the
 * store will use is there and has the columns it needs.
 */
public final class PostgresSchema {
    /** The class-path resource of the first migration: the table. */
    public static final String MIGRATION_RESOURCE = "db/idempotency/V1__idempotency_records.sql";
    /** The class-path resource of the second migration: the columns of {@link AtomicPhases}. */
    public static final String PHASES_MIGRATION_RESOURCE = "db/idempotency/V2__atomic_phases.sql";
    /** The class-path resource of the third migration: the flag of records somebody waits for. */
    public static final String WAITERS_MIGRATION_RESOURCE = "db/idempotency/V3__waiters.sql";
    /** The class-path resource of the fourth migration: the claim function ({@code <table>_claim}). */
    public static final String CLAIM_MIGRATION_RESOURCE = "db/idempotency/V4__claim_function.sql";
    /** The class-path resource of the fifth migration: drops the lease index of the first, which no statement uses. */
    public static final String LEASE_INDEX_MIGRATION_RESOURCE = "db/idempotency/V5__drop_lease_index.sql";
    /**
     * The class-path resource of the sixth migration: the generated columns that the purge and recovery
     * find records by, so that a completion changes no indexed column (a HOT update).
     */
    public static final String HOT_COMPLETION_MIGRATION_RESOURCE = "db/idempotency/V6__hot_completion.sql";
    /**
     * The class-path resource of the seventh migration: the claim function the store calls
     * ({@code <table>_claim_record}), which inserts a fresh key first and returns the record's columns.
     */
    public static final String CLAIM_RECORD_MIGRATION_RESOURCE = "db/idempotency/V7__claim_insert_first.sql";
    /**
     * The class-path resource of the eighth migration: {@code purge_after} as a plain column that the claim
     * functions write, no longer a generated one whose expression every insert and completion evaluates.
     */
    public static final String PURGE_AFTER_MIGRATION_RESOURCE = "db/idempotency/V8__purge_after_written.sql";
    /**
     * The class-path resource of the ninth migration: the record's row rule and {@code recovery_due} kept by a
     * row trigger ({@code <table>_row_rules}) instead of a CHECK constraint and a generated column, whose
     * expressions PostgreSQL parses and plans again in every statement that writes the table.
     */
    public static final String ROW_RULES_MIGRATION_RESOURCE = "db/idempotency/V9__row_rules_in_trigger.sql";
    /**
     * The class-path resource of the tenth migration: the claim function the store calls
     * ({@code <table>_claim_fresh}), which inserts a fresh key and returns its creation time, so that the
     * claim's statement is a plain read for a replay.
     */
    public static final String CLAIM_FRESH_MIGRATION_RESOURCE = "db/idempotency/V10__claim_fresh_scalar.sql";
    /**
     * The class-path resource of the eleventh migration: the row trigger's function of the ninth in fewer steps
     * (the same rule, column and error), marked by the function's comment.
     */
    public static final String ROW_RULES_STEPS_MIGRATION_RESOURCE = "db/idempotency/V11__row_rules_fewer_steps.sql";
    /**
     * The class-path resource of the twelfth migration: the column {@code replay}, a finished record's fields
     * packed for its replay, and the row trigger's function that keeps it ({@link PackedReplay}).
     */
    public static final String REPLAY_MIGRATION_RESOURCE = "db/idempotency/V12__replay_packed.sql";

    private static final List<String> MIGRATIONS = List.of(
            MIGRATION_RESOURCE,
            PHASES_MIGRATION_RESOURCE,
            WAITERS_MIGRATION_RESOURCE,
            CLAIM_MIGRATION_RESOURCE,
            LEASE_INDEX_MIGRATION_RESOURCE,
            HOT_COMPLETION_MIGRATION_RESOURCE,
            CLAIM_RECORD_MIGRATION_RESOURCE,
            PURGE_AFTER_MIGRATION_RESOURCE,
            ROW_RULES_MIGRATION_RESOURCE,
            CLAIM_FRESH_MIGRATION_RESOURCE,
            ROW_RULES_STEPS_MIGRATION_RESOURCE,
            REPLAY_MIGRATION_RESOURCE);
    /** The name of the index that {@value #LEASE_INDEX_MIGRATION_RESOURCE} drops, for the default table name. */
    private static final String LEASE_INDEX = "idempotency_records_lease_idx";
    /** The signature of the claim function, for the default table name. */
    private static final String CLAIM_FUNCTION = "idempotency_records_claim(text, text, text, bigint, bigint)";
    /** The signature of the claim function of {@value #CLAIM_RECORD_MIGRATION_RESOURCE}, for the default table name. */
    private static final String CLAIM_RECORD_FUNCTION =
            "idempotency_records_claim_record(text, text, text, bigint, bigint)";
    /** The signature of the row trigger's function of {@value #ROW_RULES_MIGRATION_RESOURCE}, for the default table name. */
    private static final String ROW_RULES_FUNCTION = "idempotency_records_row_rules()";
    /** The signature of the claim function of {@value #CLAIM_FRESH_MIGRATION_RESOURCE}, for the default table name. */
    private static final String CLAIM_FRESH_FUNCTION =
            "idempotency_records_claim_fresh(text, text, text, bigint, bigint)";

    /** Resolves the table through the search_path, like every statement of the store. */
    private static final String TABLE_EXISTS = """
            SELECT to_regclass(?) IS NOT NULL
            """;
    /** Serialises concurrent migrations of one table (several instances starting at once). */
    private static final String LOCK = """
            SELECT pg_advisory_xact_lock(hashtext('dev.exactly.idempotency.postgres'), hashtext(?))
            """;

    /**
     * Every column the store reads or writes, and its type as {@code format_type} spells it: what the
     * migration creates (a test keeps the two equal).
     */
    static final SequencedMap<String, String> COLUMNS = columns(
            "scope_key", "text",
            "status", "text",
            "fingerprint", "text",
            "owner_token", "text",
            "created_at", "timestamp with time zone",
            "lease_expires_at", "timestamp with time zone",
            "expires_at", "timestamp with time zone",
            "retention", "interval",
            "takeovers", "integer",
            "response_status", "integer",
            "response_headers", "text[]",
            "response_body", "bytea",
            "recovery_point", "text",
            "updated_at", "timestamp with time zone",
            "checkpoint_state", "bytea",
            "attempts", "integer",
            "last_error", "text",
            "dead_lettered_at", "timestamp with time zone",
            "waiters", "boolean",
            "purge_after", "timestamp with time zone",
            "recovery_due", "timestamp with time zone",
            "replay", "bytea");

    /** The columns of the second migration. */
    private static final List<String> PHASE_COLUMNS =
            List.of("checkpoint_state", "attempts", "last_error", "dead_lettered_at");

    /** A migration after the first, and the columns it adds. */
    private record Upgrade(String resource, List<String> columns) {}

    /** The migrations after the first that add columns, in order. */
    private static final List<Upgrade> UPGRADES = List.of(
            new Upgrade(PHASES_MIGRATION_RESOURCE, PHASE_COLUMNS),
            new Upgrade(WAITERS_MIGRATION_RESOURCE, List.of("waiters")),
            new Upgrade(HOT_COMPLETION_MIGRATION_RESOURCE, List.of("purge_after", "recovery_due")),
            new Upgrade(REPLAY_MIGRATION_RESOURCE, List.of("replay")));
    /**
     * The migrations that may run again on a table with every column (the claim functions, the dropped lease
     * index, the written purge_after, the row trigger and its functions, the fresh key's claim function), in the
     * order of their versions: the last, V12, also adds its column, and its trigger function replaces V9's and
     * V11's.
     */
    private static final List<Upgrade> LATER = List.of(
            new Upgrade(CLAIM_MIGRATION_RESOURCE, List.of()), new Upgrade(LEASE_INDEX_MIGRATION_RESOURCE, List.of()),
            new Upgrade(CLAIM_RECORD_MIGRATION_RESOURCE, List.of()),
                    new Upgrade(PURGE_AFTER_MIGRATION_RESOURCE, List.of()),
            new Upgrade(ROW_RULES_MIGRATION_RESOURCE, List.of()),
                    new Upgrade(CLAIM_FRESH_MIGRATION_RESOURCE, List.of()),
            new Upgrade(ROW_RULES_STEPS_MIGRATION_RESOURCE, List.of()),
                    new Upgrade(REPLAY_MIGRATION_RESOURCE, List.of()));
    /** Whether an index of that name is in the schema of the table the search_path resolves. */
    private static final String INDEX_EXISTS = """
            SELECT EXISTS (
                SELECT 1
                FROM pg_class i
                WHERE i.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass(?))
                  AND i.relname = ? AND i.relkind = 'i')
            """;
    /** Whether the table's purge_after is still the generated column of V6 (V8 makes it a plain one). */
    private static final String PURGE_AFTER_GENERATED = """
            SELECT EXISTS (
                SELECT 1
                FROM pg_attribute a
                WHERE a.attrelid = to_regclass(?) AND a.attname = 'purge_after' AND a.attgenerated <> '')
            """;
    /**
     * Whether the row trigger's function is the one of {@value #REPLAY_MIGRATION_RESOURCE}, which marks it in its
     * comment (V11's names V11, V9's has none).
     */
    private static final String ROW_RULES_CURRENT = """
            SELECT coalesce(position('migration V12' in obj_description(to_regprocedure(?), 'pg_proc')) > 0, false)
            """;
    /** Whether the claim function is there, resolved through the search_path like the store's call of it. */
    private static final String FUNCTION_EXISTS = """
            SELECT to_regprocedure(?) IS NOT NULL
            """;

    /** How to make the table: the two ways, without naming a framework. */
    private static final String HOW_TO_CREATE =
            "create the table with PostgresSchema.migrate(dataSource, config), or run "
                    + MIGRATION_RESOURCE + ", " + PHASES_MIGRATION_RESOURCE + ", " + WAITERS_MIGRATION_RESOURCE + ", "
                    + CLAIM_MIGRATION_RESOURCE + ", " + LEASE_INDEX_MIGRATION_RESOURCE + ", "
                    + HOT_COMPLETION_MIGRATION_RESOURCE
                    + ", " + CLAIM_RECORD_MIGRATION_RESOURCE + ", " + PURGE_AFTER_MIGRATION_RESOURCE + ", "
                    + ROW_RULES_MIGRATION_RESOURCE + ", " + CLAIM_FRESH_MIGRATION_RESOURCE + ", "
                    + ROW_RULES_STEPS_MIGRATION_RESOURCE + " and " + REPLAY_MIGRATION_RESOURCE
                    + " with Flyway (location classpath:db/idempotency)";

    /** Where the connection looks for unqualified names, and as whom. */
    private static final String SESSION = """
            SELECT current_setting('search_path'), current_database(), current_user
            """;
    /** The table the store's statements resolve, with its schema. */
    private static final String RESOLVE = """
            SELECT n.nspname
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.oid = to_regclass(?)
            """;
    /** Tables of that name anywhere in the database, for a message when the search_path misses them. */
    private static final String ELSEWHERE = """
            SELECT n.nspname
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relname = ? AND c.relkind IN ('r', 'p')
            ORDER BY n.nspname
            """;
    /** The columns of the resolved table, in order. */
    private static final String TABLE_COLUMNS = """
            SELECT a.attname, format_type(a.atttypid, a.atttypmod)
            FROM pg_attribute a
            WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY a.attnum
            """;
    /** Whether the session may do what the store does (a list of privileges would mean "any of"). */
    private static final String PRIVILEGES = """
            SELECT has_table_privilege(t, 'SELECT') AND has_table_privilege(t, 'INSERT')
                AND has_table_privilege(t, 'UPDATE') AND has_table_privilege(t, 'DELETE')
            FROM (SELECT to_regclass(?)::oid AS t) AS resolved
            """;

    private PostgresSchema() {}

    /** The migration scripts for the configured table name (the resources as they are for the default name). */
    public static String script(PostgresStoreConfig config) {
        StringBuilder script = new StringBuilder();
        for (String resource : MIGRATIONS) {
            script.append(resource(resource, config)).append('\n');
        }
        return script.toString();
    }

    private static String resource(String resource, PostgresStoreConfig config) {
        try (InputStream in = PostgresSchema.class.getResourceAsStream("/" + resource)) {
            Objects.requireNonNull(in, resource + " is missing from the class path");
            return Sql.onTable(new String(in.readAllBytes(), StandardCharsets.UTF_8), config.tableName());
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + resource, e);
        }
    }

    /** Creates the default table if it is missing; see {@link #migrate(DataSource, PostgresStoreConfig)}. */
    public static boolean migrate(DataSource dataSource) {
        return migrate(dataSource, PostgresStoreConfig.ofDefaults());
    }

    /**
     * Creates the configured table and its indexes if the table is missing (or adds the columns of the
     * later migrations to a table made by an earlier one), in one transaction under an advisory lock, so that
     * instances starting together do not race.
     *
     * @return whether the table was created
     * @throws StoreUnavailableException if PostgreSQL failed or could not be reached
     */
    public static boolean migrate(DataSource dataSource, PostgresStoreConfig config) {
        Jdbc jdbc = new Jdbc(config.statementTimeout().multipliedBy(5));
        String table = config.tableName();
        try (Connection connection = dataSource.getConnection()) {
            if (tableExists(jdbc, connection, table)
                    && upgrades(jdbc, connection, table).isEmpty()) {
                return false;
            }
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                jdbc.query(connection, LOCK, s -> s.setString(1, table), row -> true);
                boolean created = !tableExists(jdbc, connection, table);
                if (created) {
                    jdbc.execute(connection, script(config));
                } else {
                    for (Upgrade upgrade : upgrades(jdbc, connection, table)) {
                        jdbc.execute(connection, resource(upgrade.resource(), config));
                    }
                }
                connection.commit();
                return created;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            } finally {
                connection.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw SqlFailures.unavailable("migration of " + table, e);
        }
    }

    /**
     * Checks that the configured table is where the store's statements will find it (through the
     * connection's {@code search_path}), has every column the store uses with the expected type, and
     * that the connection's user may read and write it; extra columns are allowed. Call it at startup,
     * so that a missing or foreign table stops the application instead of failing every request.
     *
     * @throws IllegalStateException naming what is wrong and how to create the table
     * @throws StoreUnavailableException if PostgreSQL failed or could not be reached
     */
    public static void verify(DataSource dataSource, PostgresStoreConfig config) {
        verify(dataSource, config, HOW_TO_CREATE);
    }

    /**
     * {@link #verify(DataSource, PostgresStoreConfig)}, with the caller's words for how to create the table
     * (a framework names its own setting), used in the message of a missing or foreign table.
     */
    public static void verify(DataSource dataSource, PostgresStoreConfig config, String howToCreate) {
        Jdbc jdbc = new Jdbc(config.statementTimeout().multipliedBy(5));
        String table = config.tableName();
        try (Connection connection = dataSource.getConnection()) {
            Session session = jdbc.query(
                            connection,
                            SESSION,
                            s -> {},
                            row -> new Session(row.getString(1), row.getString(2), row.getString(3)))
                    .getFirst();
            List<String> schema = jdbc.query(connection, RESOLVE, s -> s.setString(1, table), row -> row.getString(1));
            if (schema.isEmpty()) {
                List<String> elsewhere =
                        jdbc.query(connection, ELSEWHERE, s -> s.setString(1, table), row -> row.getString(1));
                throw new IllegalStateException("the idempotency table " + table + " does not exist in "
                        + session + "; " + howToCreate
                        + (elsewhere.isEmpty()
                                ? ""
                                : ". A table of that name is in schema " + names(elsewhere, 3)
                                        + ", which that search_path does not reach: if it is the one, set the schema on the "
                                        + "connection (e.g. currentSchema in the JDBC URL)"));
            }
            String qualified = schema.getFirst() + "." + table;
            Map<String, String> actual = new LinkedHashMap<>();
            for (Map.Entry<String, String> column : jdbc.query(
                    connection,
                    TABLE_COLUMNS,
                    s -> s.setString(1, table),
                    row -> Map.entry(row.getString(1), row.getString(2)))) {
                actual.put(column.getKey(), column.getValue());
            }
            List<String> problems = new ArrayList<>();
            COLUMNS.forEach((column, type) -> {
                String found = actual.get(column);
                if (found == null) {
                    problems.add("column " + column + " (" + type + ") is missing");
                } else if (!found.equals(type)) {
                    problems.add("column " + column + " is " + found + ", not " + type);
                }
            });
            List<Upgrade> upgrades = upgrades(actual.keySet());
            if (!problems.isEmpty() && !upgrades.isEmpty()) {
                String resources = String.join(
                                " and ",
                                upgrades.stream().map(Upgrade::resource).toList()) + " (and "
                        + String.join(
                                ", ",
                                besides(upgrades).stream()
                                        .map(Upgrade::resource)
                                        .toList()) + ")";
                throw new IllegalStateException("the idempotency table " + qualified + " was made by "
                        + (upgrades.size() == UPGRADES.size() ? MIGRATION_RESOURCE : "earlier migrations")
                        + " and lacks the columns of " + resources + " ("
                        + String.join(
                                ", ",
                                upgrades.stream()
                                        .flatMap(u -> u.columns().stream())
                                        .toList())
                        + "): run PostgresSchema.migrate(dataSource, config), which adds them, or let Flyway run "
                        + resources + " (location classpath:db/idempotency)");
            }
            if (!problems.isEmpty()) {
                throw new IllegalStateException("the idempotency table " + qualified + " is not the store's table: "
                        + String.join("; ", problems) + ". It was not created by " + MIGRATION_RESOURCE
                        + ": drop or rename it, or configure another table name for the store; then " + howToCreate);
            }
            if (!claimFunctionExists(jdbc, connection, table)) {
                throw new IllegalStateException("the idempotency table " + qualified + " has no claim function "
                        + Sql.onTable(CLAIM_FUNCTION, table) + " (it was made by earlier migrations): run "
                        + "PostgresSchema.migrate(dataSource, config), which adds it, or let Flyway run "
                        + CLAIM_MIGRATION_RESOURCE + " and " + CLAIM_FRESH_MIGRATION_RESOURCE
                        + " (location classpath:db/idempotency)");
            }
            if (purgeAfterGenerated(jdbc, connection, table)) {
                throw new IllegalStateException("the idempotency table " + qualified + " still computes purge_after "
                        + "as a generated column (it was made by earlier migrations), which the store now writes: run "
                        + "PostgresSchema.migrate(dataSource, config), which changes it, or let Flyway run "
                        + PURGE_AFTER_MIGRATION_RESOURCE + " (location classpath:db/idempotency)");
            }
            if (!functionExists(jdbc, connection, CLAIM_FRESH_FUNCTION, table)) {
                throw new IllegalStateException("the idempotency table " + qualified + " has no claim function "
                        + Sql.onTable(CLAIM_FRESH_FUNCTION, table) + " (it was made by earlier migrations): run "
                        + "PostgresSchema.migrate(dataSource, config), which adds it, or let Flyway run "
                        + CLAIM_FRESH_MIGRATION_RESOURCE + " (location classpath:db/idempotency)");
            }
            boolean allowed = jdbc.query(connection, PRIVILEGES, s -> s.setString(1, table), row -> row.getBoolean(1))
                    .getFirst();
            if (!allowed) {
                throw new IllegalStateException("user " + session.user() + " may not SELECT, INSERT, UPDATE and "
                        + "DELETE rows of the idempotency table " + qualified
                        + ": grant these privileges to that user");
            }
        } catch (SQLException e) {
            throw SqlFailures.unavailable("schema check of " + table, e);
        }
    }

    /** Where unqualified names are looked up. */
    private record Session(String searchPath, String database, String user) {
        @Override
        public String toString() {
            return "the search_path \"" + searchPath + "\" of database " + database + " (user " + user + ")";
        }
    }

    /** The first {@code max} names, and how many more there are. */
    private static String names(List<String> names, int max) {
        String shown = String.join(", ", names.subList(0, Math.min(max, names.size())));
        return names.size() <= max ? shown : shown + " and " + (names.size() - max) + " more";
    }

    private static SequencedMap<String, String> columns(String... nameTypePairs) {
        SequencedMap<String, String> columns = new LinkedHashMap<>();
        for (int i = 0; i < nameTypePairs.length; i += 2) {
            columns.put(nameTypePairs[i], nameTypePairs[i + 1]);
        }
        return Collections.unmodifiableSequencedMap(columns);
    }

    /**
     * The migrations a table made by an earlier one lacks, in order: the table has every column but
     * theirs, and none of theirs, and then the migrations that add no column; or, for a table with every
     * column, those when a claim function or the row trigger's function is missing or not V12's, the lease index
     * still there or purge_after still generated. Any other table (up
     * to date, or no table of the store's at all) gets none: {@link #verify} says what is wrong with a
     * foreign one.
     */
    private static List<Upgrade> upgrades(Jdbc jdbc, Connection connection, String table) throws SQLException {
        List<String> columns =
                jdbc.query(connection, TABLE_COLUMNS, s -> s.setString(1, table), row -> row.getString(1));
        List<Upgrade> upgrades = upgrades(columns);
        if (!upgrades.isEmpty()) {
            // in the order of their versions: the table's columns, then the function, then the indexes
            return Stream.concat(upgrades.stream(), besides(upgrades).stream())
                    .sorted(Comparator.comparingInt(u -> MIGRATIONS.indexOf(u.resource())))
                    .toList();
        }
        boolean current = columns.containsAll(COLUMNS.keySet());
        return current
                        && (!claimFunctionExists(jdbc, connection, table)
                                || !functionExists(jdbc, connection, CLAIM_RECORD_FUNCTION, table)
                                || leaseIndexExists(jdbc, connection, table)
                                || purgeAfterGenerated(jdbc, connection, table)
                                || !functionExists(jdbc, connection, ROW_RULES_FUNCTION, table)
                                || !functionExists(jdbc, connection, CLAIM_FRESH_FUNCTION, table)
                                || !rowRulesCurrent(jdbc, connection, table))
                ? LATER
                : List.of();
    }

    /** {@link #LATER} but the migrations among {@code upgrades} (V12 adds a column and may run again). */
    private static List<Upgrade> besides(List<Upgrade> upgrades) {
        List<String> adding = upgrades.stream().map(Upgrade::resource).toList();
        return LATER.stream().filter(u -> !adding.contains(u.resource())).toList();
    }

    private static boolean leaseIndexExists(Jdbc jdbc, Connection connection, String table) throws SQLException {
        // the index lives in the table's schema: qualify it by that, not by the search_path
        return jdbc.query(
                        connection,
                        INDEX_EXISTS,
                        s -> {
                            s.setString(1, table);
                            s.setString(2, Sql.onTable(LEASE_INDEX, table));
                        },
                        row -> row.getBoolean(1))
                .getFirst();
    }

    private static boolean purgeAfterGenerated(Jdbc jdbc, Connection connection, String table) throws SQLException {
        return jdbc.query(connection, PURGE_AFTER_GENERATED, s -> s.setString(1, table), row -> row.getBoolean(1))
                .getFirst();
    }

    private static boolean rowRulesCurrent(Jdbc jdbc, Connection connection, String table) throws SQLException {
        return jdbc.query(
                        connection,
                        ROW_RULES_CURRENT,
                        s -> s.setString(1, Sql.onTable(ROW_RULES_FUNCTION, table)),
                        row -> row.getBoolean(1))
                .getFirst();
    }

    private static boolean claimFunctionExists(Jdbc jdbc, Connection connection, String table) throws SQLException {
        return functionExists(jdbc, connection, CLAIM_FUNCTION, table);
    }

    private static boolean functionExists(Jdbc jdbc, Connection connection, String signature, String table)
            throws SQLException {
        return jdbc.query(
                        connection,
                        FUNCTION_EXISTS,
                        s -> s.setString(1, Sql.onTable(signature, table)),
                        row -> row.getBoolean(1))
                .getFirst();
    }

    private static List<Upgrade> upgrades(Collection<String> columns) {
        for (int first = 0; first < UPGRADES.size(); first++) {
            List<Upgrade> later = UPGRADES.subList(first, UPGRADES.size());
            List<String> added =
                    later.stream().flatMap(u -> u.columns().stream()).toList();
            if (COLUMNS.keySet().stream().allMatch(c -> columns.contains(c) || added.contains(c))
                    && added.stream().noneMatch(columns::contains)) {
                return later;
            }
        }
        return List.of();
    }

    private static boolean tableExists(Jdbc jdbc, Connection connection, String table) throws SQLException {
        List<Boolean> exists =
                jdbc.query(connection, TABLE_EXISTS, s -> s.setString(1, table), row -> row.getBoolean(1));
        return exists.getFirst();
    }
}
