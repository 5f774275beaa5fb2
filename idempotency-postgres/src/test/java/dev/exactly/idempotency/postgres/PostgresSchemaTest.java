package dev.exactly.idempotency.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.testing.TestPostgres;
import dev.exactly.testing.TestRedis;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** {@link PostgresSchema#verify}: a missing, misplaced, foreign or forbidden table is reported with its fix. */
class PostgresSchemaTest {
    private static final PostgresStoreConfig DEFAULTS = PostgresStoreConfig.ofDefaults();

    @Test
    void theExpectedColumnsAreExactlyWhatTheMigrationCreates() throws SQLException {
        DataSource schema = TestPostgres.freshSchema("schema_columns");
        assertThat(PostgresSchema.migrate(schema)).isTrue();

        Map<String, String> created = new LinkedHashMap<>();
        try (Connection c = schema.getConnection();
                Statement s = c.createStatement();
                ResultSet rows = s.executeQuery("""
                        SELECT a.attname, format_type(a.atttypid, a.atttypmod)
                        FROM pg_attribute a
                        WHERE a.attrelid = to_regclass('idempotency_records') AND a.attnum > 0 AND NOT a.attisdropped
                        ORDER BY a.attnum
                        """)) {
            while (rows.next()) {
                created.put(rows.getString(1), rows.getString(2));
            }
        }
        assertThat(created).containsExactlyEntriesOf(PostgresSchema.COLUMNS);
        PostgresSchema.verify(schema, DEFAULTS);
    }

    @Test
    void aMissingTableNamesTheSearchPathAndBothWaysToCreateIt() {
        DataSource empty = TestPostgres.freshSchema("schema_missing");
        // a name no other schema of the shared database has
        String table = "missing_" + ProcessHandle.current().pid() + "_" + System.nanoTime();
        PostgresStoreConfig config =
                PostgresStoreConfig.custom().tableName(table).build();

        assertThatThrownBy(() -> PostgresSchema.verify(empty, config))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("the idempotency table " + table + " does not exist in the search_path \"")
                .hasMessageContaining("schema_missing")
                .hasMessageContaining("of database test (user postgres)")
                .hasMessageContaining("; create the table with PostgresSchema.migrate(dataSource, config)")
                .hasMessageContaining(
                        "db/idempotency/V1__idempotency_records.sql, db/idempotency/V2__atomic_phases.sql, "
                                + "db/idempotency/V3__waiters.sql, db/idempotency/V4__claim_function.sql, "
                                + "db/idempotency/V5__drop_lease_index.sql, db/idempotency/V6__hot_completion.sql, "
                                + "db/idempotency/V7__claim_insert_first.sql, db/idempotency/V8__purge_after_written.sql, "
                                + "db/idempotency/V9__row_rules_in_trigger.sql, db/idempotency/V10__claim_fresh_scalar.sql, "
                                + "db/idempotency/V11__row_rules_fewer_steps.sql and db/idempotency/V12__replay_packed.sql "
                                + "with Flyway "
                                + "(location classpath:db/idempotency)")
                .hasMessageNotContaining("A table of that name");
    }

    @Test
    void aTableInASchemaTheSearchPathMissesIsNamed() {
        PGSimpleDataSource elsewhere = (PGSimpleDataSource) TestPostgres.freshSchema("schema_elsewhere");
        String table = "elsewhere_" + ProcessHandle.current().pid() + "_" + System.nanoTime();
        PostgresStoreConfig config =
                PostgresStoreConfig.custom().tableName(table).build();
        PostgresSchema.migrate(elsewhere, config);
        DataSource here = TestPostgres.freshSchema("schema_here");

        assertThatThrownBy(() -> PostgresSchema.verify(here, config))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the idempotency table " + table + " does not exist")
                .hasMessageContaining(
                        "with Flyway (location classpath:db/idempotency). A table of that name is in schema "
                                + elsewhere.getCurrentSchema()
                                + ", which that search_path does not reach: if it is the one, set "
                                + "the schema on the connection (e.g. currentSchema in the JDBC URL)");
        PostgresSchema.verify(elsewhere, config);
    }

    @Test
    void aTableOfThatNameWithOtherColumnsIsNotTakenForTheStoresTable() {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("schema_foreign");
        execute(schema, """
                CREATE TABLE idempotency_records (scope_key text PRIMARY KEY, status integer, fingerprint text,
                    owner_token text, created_at timestamptz, expires_at timestamptz, note text)
                """);

        assertThatThrownBy(() -> PostgresSchema.verify(schema, DEFAULTS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("the idempotency table " + schema.getCurrentSchema()
                        + ".idempotency_records is not the store's table: column status is integer, not text; "
                        + "column lease_expires_at (timestamp with time zone) is missing; ")
                .hasMessageContaining("column updated_at (timestamp with time zone) is missing;")
                .hasMessageContaining("column dead_lettered_at (timestamp with time zone) is missing;")
                .hasMessageContaining("column waiters (boolean) is missing;")
                .hasMessageContaining("column recovery_due (timestamp with time zone) is missing;")
                .hasMessageContaining("column replay (bytea) is missing.")
                .hasMessageContaining(
                        "It was not created by db/idempotency/V1__idempotency_records.sql: drop or rename it, "
                                + "or configure another table name for the store; then create the table with PostgresSchema.migrate")
                .hasMessageNotContaining("column note");
    }

    @Test
    void aTableOfTheThirdMigrationGetsTheClaimFunctionAndServesClaimsAndReplays() {
        DataSource schema = TestPostgres.freshSchema("schema_v3");
        for (String resource : new String[] {
            PostgresSchema.MIGRATION_RESOURCE,
            PostgresSchema.PHASES_MIGRATION_RESOURCE,
            PostgresSchema.WAITERS_MIGRATION_RESOURCE
        }) {
            execute(schema, resource(resource));
        }
        ScopeKey key = TestDatabase.randomKey();
        Fingerprint fingerprint = TestDatabase.randomFingerprint();
        execute(
                schema,
                "INSERT INTO idempotency_records (scope_key, status, fingerprint, owner_token, created_at, "
                        + "lease_expires_at, expires_at, retention, updated_at) VALUES ('" + key.hash()
                        + "', 'PROCESSING', '"
                        + fingerprint.encoded()
                        + "', 'v3owner', now(), now() + interval '1 minute', now() + interval '1 hour', "
                        + "interval '1 hour', now())");

        assertThatThrownBy(() -> PostgresSchema.verify(schema, DEFAULTS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lacks the columns of " + PostgresSchema.HOT_COMPLETION_MIGRATION_RESOURCE)
                .hasMessageContaining("PostgresSchema.migrate(dataSource, config)")
                .hasMessageContaining(PostgresSchema.CLAIM_MIGRATION_RESOURCE);

        assertThat(leaseIndexExists(schema)).isTrue();

        assertThat(PostgresSchema.migrate(schema)).as("upgraded, not created").isFalse();
        PostgresSchema.verify(schema, DEFAULTS);
        assertThat(leaseIndexExists(schema))
                .as("the lease index no statement uses is dropped")
                .isFalse();
        assertThat(PostgresSchema.migrate(schema)).as("nothing left to do").isFalse();
        // Flyway-style scripts may run again
        execute(schema, resource(PostgresSchema.CLAIM_MIGRATION_RESOURCE));
        execute(schema, resource(PostgresSchema.LEASE_INDEX_MIGRATION_RESOURCE));

        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(schema)) {
            assertThat(store.claim(key, fingerprint, OwnerToken.random(), Duration.ofMinutes(1), Duration.ofHours(1)))
                    .as("the record written before the upgrade is still in flight")
                    .isInstanceOf(ClaimOutcome.InFlight.class);
            assertThat(store.complete(
                            key, new OwnerToken("v3owner"), RecordStatus.COMPLETED, TestDatabase.response(201, "{}")))
                    .isTrue();
            assertThat(store.claim(key, fingerprint, OwnerToken.random(), Duration.ofMinutes(1), Duration.ofHours(1)))
                    .isInstanceOfSatisfying(
                            ClaimOutcome.Finished.class,
                            f -> assertThat(f.record().response().body())
                                    .isEqualTo("{}".getBytes(StandardCharsets.UTF_8)));
            ScopeKey fresh = TestDatabase.randomKey();
            assertThat(store.claim(fresh, fingerprint, OwnerToken.random(), Duration.ofMinutes(1), Duration.ofHours(1)))
                    .isInstanceOf(ClaimOutcome.Claimed.class);
        }
    }

    @Test
    void aTableOfTheFourthMigrationLosesTheLeaseIndexAndATableCreatedNowNeverHasIt() {
        DataSource schema = TestPostgres.freshSchema("schema_v4");
        for (String resource : new String[] {
            PostgresSchema.MIGRATION_RESOURCE,
            PostgresSchema.PHASES_MIGRATION_RESOURCE,
            PostgresSchema.WAITERS_MIGRATION_RESOURCE,
            PostgresSchema.CLAIM_MIGRATION_RESOURCE
        }) {
            execute(schema, resource(resource));
        }
        assertThat(leaseIndexExists(schema)).isTrue();

        assertThat(PostgresSchema.migrate(schema)).as("upgraded, not created").isFalse();

        PostgresSchema.verify(schema, DEFAULTS);
        assertThat(leaseIndexExists(schema)).isFalse();
        DataSource created = TestPostgres.freshSchema("schema_v5");
        assertThat(PostgresSchema.migrate(created)).isTrue();
        assertThat(leaseIndexExists(created)).isFalse();
        PostgresSchema.verify(created, DEFAULTS);
    }

    @Test
    void aTableOfTheFifthMigrationWithLiveRowsGetsTheGeneratedColumnsAndKeepsServing() throws SQLException {
        DataSource schema = TestPostgres.freshSchema("schema_v5");
        migrateUpTo(schema, PostgresSchema.LEASE_INDEX_MIGRATION_RESOURCE);
        Fingerprint fingerprint = TestDatabase.randomFingerprint();
        ScopeKey finished = TestDatabase.randomKey();
        ScopeKey inFlight = TestDatabase.randomKey();
        ScopeKey phase = TestDatabase.randomKey();
        ScopeKey deadLetter = TestDatabase.randomKey();
        ScopeKey expired = TestDatabase.randomKey();
        // rows as the store of V5 wrote them: a finished record, one in flight, a phase whose lease ran out, a
        // dead-lettered phase, and a record that expired an hour ago
        execute(
                schema,
                INSERT_ROWS
                        + row(
                                finished,
                                "COMPLETED",
                                fingerprint,
                                "o1",
                                "now()",
                                "NULL",
                                "now() + interval '1 hour'",
                                FINISHED,
                                "NULL")
                        + ", "
                        + row(
                                inFlight,
                                "PROCESSING",
                                fingerprint,
                                "o2",
                                "now()",
                                "now() + interval '1 minute'",
                                "now() + interval '1 hour'",
                                UNFINISHED,
                                "NULL")
                        + ", "
                        + row(
                                phase,
                                "PROCESSING",
                                fingerprint,
                                "o3",
                                "now() - interval '2 hours'",
                                "now() - interval '1 minute'",
                                "'infinity'",
                                UNFINISHED,
                                "NULL")
                        + ", "
                        + row(
                                deadLetter,
                                "PROCESSING",
                                fingerprint,
                                "o4",
                                "now() - interval '2 hours'",
                                "now() - interval '1 minute'",
                                "'infinity'",
                                UNFINISHED,
                                "now()")
                        + ", "
                        + row(
                                expired,
                                "COMPLETED",
                                fingerprint,
                                "o5",
                                "now() - interval '3 hours'",
                                "NULL",
                                "now() - interval '1 hour'",
                                "200, '{}', '\\x'",
                                "NULL"));

        assertThatThrownBy(() -> PostgresSchema.verify(schema, DEFAULTS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lacks the columns of " + PostgresSchema.HOT_COMPLETION_MIGRATION_RESOURCE)
                .hasMessageContaining("purge_after, recovery_due");

        assertThat(PostgresSchema.migrate(schema)).as("upgraded, not created").isFalse();
        PostgresSchema.verify(schema, DEFAULTS);
        assertThat(PostgresSchema.migrate(schema)).as("nothing left to do").isFalse();
        execute(schema, resource(PostgresSchema.HOT_COMPLETION_MIGRATION_RESOURCE)); // may run again
        assertThat(indexes(schema))
                .containsExactlyInAnyOrder(
                        "idempotency_records_pkey",
                        "idempotency_records_purge_idx",
                        "idempotency_records_recovery_idx");

        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(schema);
                Connection c = schema.getConnection()) {
            assertThat(store.claim(
                            finished, fingerprint, OwnerToken.random(), Duration.ofMinutes(1), Duration.ofHours(1)))
                    .isInstanceOfSatisfying(
                            ClaimOutcome.Finished.class,
                            f -> assertThat(f.record().response().body())
                                    .isEqualTo("{}".getBytes(StandardCharsets.UTF_8)));
            assertThat(store.complete(
                            inFlight, new OwnerToken("o2"), RecordStatus.COMPLETED, TestDatabase.response(201, "{}")))
                    .isTrue();
            // recovery finds the phase whose lease ran out, and only it, through the new index
            assertThat(store.takeOverExpired(c, Duration.ofMinutes(1), 10))
                    .extracting(row ->
                            ((ClaimOutcome.Claimed) row.outcome()).record().key())
                    .containsExactly(phase);
            // the purge deletes the expired record, and nothing else
            assertThat(store.purgeAllExpired(100)).isEqualTo(1);
            assertThat(store.find(expired)).isEmpty();
            for (ScopeKey kept : List.of(finished, inFlight, phase, deadLetter)) {
                assertThat(store.find(kept)).as("kept").isPresent();
            }
        }
    }

    @Test
    void aTableOfTheSixthMigrationWithLiveRowsGetsTheInsertFirstClaimAndKeepsServing() throws SQLException {
        DataSource schema = TestPostgres.freshSchema("schema_v6");
        migrateUpTo(schema, PostgresSchema.HOT_COMPLETION_MIGRATION_RESOURCE);
        Fingerprint fingerprint = TestDatabase.randomFingerprint();
        ScopeKey finished = TestDatabase.randomKey();
        ScopeKey inFlight = TestDatabase.randomKey();
        ScopeKey leaseRanOut = TestDatabase.randomKey();
        ScopeKey expired = TestDatabase.randomKey();
        // rows as the store of V6 wrote them: a finished record, one in flight, one whose lease ran out, and a
        // record that expired an hour ago
        execute(
                schema,
                INSERT_ROWS
                        + row(
                                finished,
                                "COMPLETED",
                                fingerprint,
                                "o1",
                                "now()",
                                "NULL",
                                "now() + interval '1 hour'",
                                FINISHED,
                                "NULL")
                        + ", "
                        + row(
                                inFlight,
                                "PROCESSING",
                                fingerprint,
                                "o2",
                                "now()",
                                "now() + interval '1 minute'",
                                "now() + interval '1 hour'",
                                UNFINISHED,
                                "NULL")
                        + ", "
                        + row(
                                leaseRanOut,
                                "PROCESSING",
                                fingerprint,
                                "o3",
                                "now()",
                                "now() - interval '1 minute'",
                                "now() + interval '1 hour'",
                                UNFINISHED,
                                "NULL")
                        + ", "
                        + row(
                                expired,
                                "COMPLETED",
                                fingerprint,
                                "o4",
                                "now() - interval '3 hours'",
                                "NULL",
                                "now() - interval '1 hour'",
                                "200, '{}', '\\x'",
                                "NULL"));

        assertThatThrownBy(() -> PostgresSchema.verify(schema, DEFAULTS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lacks the columns of " + PostgresSchema.REPLAY_MIGRATION_RESOURCE)
                .hasMessageContaining("PostgresSchema.migrate(dataSource, config)")
                .hasMessageContaining(PostgresSchema.PURGE_AFTER_MIGRATION_RESOURCE);

        assertThat(PostgresSchema.migrate(schema)).as("upgraded, not created").isFalse();
        PostgresSchema.verify(schema, DEFAULTS);
        assertThat(PostgresSchema.migrate(schema)).as("nothing left to do").isFalse();
        execute(schema, resource(PostgresSchema.CLAIM_RECORD_MIGRATION_RESOURCE)); // may run again

        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(schema)) {
            Duration lease = Duration.ofMinutes(1);
            Duration retention = Duration.ofHours(1);
            assertThat(store.claim(finished, fingerprint, OwnerToken.random(), lease, retention))
                    .isInstanceOfSatisfying(
                            ClaimOutcome.Finished.class,
                            f -> assertThat(f.record().response().body())
                                    .isEqualTo("{}".getBytes(StandardCharsets.UTF_8)));
            assertThat(store.claim(inFlight, fingerprint, OwnerToken.random(), lease, retention))
                    .isInstanceOfSatisfying(
                            ClaimOutcome.InFlight.class,
                            f -> assertThat(f.record().owner()).isEqualTo(new OwnerToken("o2")));
            OwnerToken taker = OwnerToken.random();
            assertThat(store.claim(leaseRanOut, fingerprint, taker, lease, retention))
                    .as("an expired lease is taken over")
                    .isInstanceOfSatisfying(ClaimOutcome.Claimed.class, c -> {
                        assertThat(c.takeover()).isTrue();
                        assertThat(c.record().owner()).isEqualTo(taker);
                    });
            assertThat(store.complete(
                            leaseRanOut,
                            new OwnerToken("o3"),
                            RecordStatus.COMPLETED,
                            TestDatabase.response(201, "{}")))
                    .as("the old owner is fenced off")
                    .isFalse();
            assertThat(store.complete(leaseRanOut, taker, RecordStatus.COMPLETED, TestDatabase.response(201, "{}")))
                    .isTrue();
            OwnerToken renewer = OwnerToken.random();
            assertThat(store.claim(expired, fingerprint, renewer, lease, retention))
                    .as("an expired record is replaced")
                    .isInstanceOfSatisfying(ClaimOutcome.Claimed.class, c -> {
                        assertThat(c.takeover()).isFalse();
                        assertThat(c.record().owner()).isEqualTo(renewer);
                        assertThat(c.record().fingerprint()).isEqualTo(fingerprint);
                    });
            ScopeKey fresh = TestDatabase.randomKey();
            OwnerToken owner = OwnerToken.random();
            assertThat(store.claim(fresh, fingerprint, owner, lease, retention))
                    .isInstanceOfSatisfying(ClaimOutcome.Claimed.class, c -> {
                        assertThat(c.takeover()).isFalse();
                        assertThat(c.record().owner()).isEqualTo(owner);
                        assertThat(c.record().leaseExpiresAt())
                                .isEqualTo(c.record().createdAt().plus(lease));
                        assertThat(c.record().expiresAt())
                                .isEqualTo(c.record().createdAt().plus(retention));
                    });
            assertThat(store.complete(
                            inFlight, new OwnerToken("o2"), RecordStatus.COMPLETED, TestDatabase.response(201, "{}")))
                    .isTrue();
        }
    }

    @Test
    void aTableOfTheSeventhMigrationWithLiveRowsGetsAWrittenPurgeAfterAndKeepsPurgingWhatExpired() throws SQLException {
        DataSource schema = TestPostgres.freshSchema("schema_v7");
        migrateUpTo(schema, PostgresSchema.CLAIM_RECORD_MIGRATION_RESOURCE);
        Fingerprint fingerprint = TestDatabase.randomFingerprint();
        ScopeKey finished = TestDatabase.randomKey();
        ScopeKey phase = TestDatabase.randomKey();
        ScopeKey expired = TestDatabase.randomKey();
        // rows as V7 left them: a finished record, a phase in progress (generated purge_after 'infinity'), and a
        // record that expired an hour ago
        execute(
                schema,
                INSERT_ROWS
                        + row(
                                finished,
                                "COMPLETED",
                                fingerprint,
                                "o1",
                                "now()",
                                "NULL",
                                "now() + interval '1 hour'",
                                FINISHED,
                                "NULL")
                        + ", "
                        + row(
                                phase,
                                "PROCESSING",
                                fingerprint,
                                "o2",
                                "now() - interval '2 hours'",
                                "now() + interval '1 minute'",
                                "'infinity'",
                                UNFINISHED,
                                "NULL")
                        + ", "
                        + row(
                                expired,
                                "COMPLETED",
                                fingerprint,
                                "o3",
                                "now() - interval '3 hours'",
                                "NULL",
                                "now() - interval '1 hour'",
                                "200, '{}', '\\x'",
                                "NULL"));
        assertThat(purgeAfter(schema, phase)).isEqualTo("infinity");

        assertThatThrownBy(() -> PostgresSchema.verify(schema, DEFAULTS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lacks the columns of " + PostgresSchema.REPLAY_MIGRATION_RESOURCE)
                .hasMessageContaining(PostgresSchema.PURGE_AFTER_MIGRATION_RESOURCE);

        assertThat(PostgresSchema.migrate(schema)).as("upgraded, not created").isFalse();
        PostgresSchema.verify(schema, DEFAULTS);
        assertThat(PostgresSchema.migrate(schema)).as("nothing left to do").isFalse();
        execute(schema, resource(PostgresSchema.PURGE_AFTER_MIGRATION_RESOURCE)); // may run again
        assertThat(indexes(schema))
                .containsExactlyInAnyOrder(
                        "idempotency_records_pkey",
                        "idempotency_records_purge_idx",
                        "idempotency_records_recovery_idx");
        assertThat(purgeAfterIsLowerBound(schema, phase))
                .as("the phase gets its claim's expiry")
                .isTrue();
        assertThat(purgeAfter(schema, phase)).isNotEqualTo("infinity");

        // a writer that does not know the column (a store of an earlier version, the application's own SQL)
        ScopeKey unknowing = TestDatabase.randomKey();
        execute(
                schema,
                INSERT_ROWS
                        + row(
                                unknowing,
                                "COMPLETED",
                                fingerprint,
                                "o4",
                                "now() - interval '3 hours'",
                                "NULL",
                                "now() - interval '1 hour'",
                                "200, '{}', '\\x'",
                                "NULL"));
        assertThat(purgeAfter(schema, unknowing)).isEqualTo("-infinity");

        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(schema)) {
            Duration lease = Duration.ofMinutes(1);
            Duration retention = Duration.ofHours(1);
            ScopeKey fresh = TestDatabase.randomKey();
            OwnerToken owner = OwnerToken.random();
            assertThat(store.claim(fresh, fingerprint, owner, lease, retention))
                    .isInstanceOf(ClaimOutcome.Claimed.class);
            assertThat(purgeAfterIsExpiry(schema, fresh))
                    .as("a claim writes its expiry")
                    .isTrue();
            assertThat(store.complete(fresh, owner, RecordStatus.COMPLETED, TestDatabase.response(201, "{}")))
                    .isTrue();
            assertThat(purgeAfterIsLowerBound(schema, fresh))
                    .as("the completion keeps the lower bound")
                    .isTrue();
            assertThat(store.claim(finished, fingerprint, OwnerToken.random(), lease, retention))
                    .isInstanceOf(ClaimOutcome.Finished.class);
            // the purge deletes the two expired records, and nothing else
            assertThat(store.purgeAllExpired(100)).isEqualTo(2);
            assertThat(store.find(expired)).isEmpty();
            assertThat(store.find(unknowing)).isEmpty();
            for (ScopeKey kept : List.of(finished, phase, fresh)) {
                assertThat(store.find(kept)).as("kept").isPresent();
            }
            OwnerToken renewer = OwnerToken.random();
            execute(
                    schema,
                    "UPDATE idempotency_records SET expires_at = now() - interval '1 second' " + "WHERE scope_key = '"
                            + fresh.hash() + "'");
            assertThat(store.claim(fresh, fingerprint, renewer, lease, retention))
                    .as("an expired record is replaced")
                    .isInstanceOf(ClaimOutcome.Claimed.class);
            assertThat(purgeAfterIsExpiry(schema, fresh))
                    .as("a replaced record gets its new expiry")
                    .isTrue();
        }
    }

    @Test
    void aTableOfTheEighthMigrationWithLiveRowsGetsTheRowTriggerAndTheFreshClaimAndKeepsItsRecoveryDue()
            throws SQLException {
        DataSource schema = TestPostgres.freshSchema("schema_v8");
        migrateUpTo(schema, PostgresSchema.PURGE_AFTER_MIGRATION_RESOURCE);
        Fingerprint fingerprint = TestDatabase.randomFingerprint();
        ScopeKey finished = TestDatabase.randomKey();
        ScopeKey phase = TestDatabase.randomKey();
        ScopeKey deadLetter = TestDatabase.randomKey();
        // rows as V8 left them: recovery_due computed by the generated column
        execute(
                schema,
                INSERT_ROWS
                        + row(
                                finished,
                                "COMPLETED",
                                fingerprint,
                                "o1",
                                "now()",
                                "NULL",
                                "now() + interval '1 hour'",
                                FINISHED,
                                "NULL")
                        + ", "
                        + row(
                                phase,
                                "PROCESSING",
                                fingerprint,
                                "o2",
                                "now() - interval '2 hours'",
                                "now() - interval '1 minute'",
                                "'infinity'",
                                UNFINISHED,
                                "NULL")
                        + ", "
                        + row(
                                deadLetter,
                                "PROCESSING",
                                fingerprint,
                                "o3",
                                "now() - interval '2 hours'",
                                "now() - interval '1 minute'",
                                "'infinity'",
                                UNFINISHED,
                                "now()"));
        assertThat(recoveryDueIsLease(schema, phase)).isTrue();
        assertThatThrownBy(() -> PostgresSchema.verify(schema, DEFAULTS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lacks the columns of " + PostgresSchema.REPLAY_MIGRATION_RESOURCE)
                .hasMessageContaining(PostgresSchema.CLAIM_FRESH_MIGRATION_RESOURCE);

        assertThat(PostgresSchema.migrate(schema)).as("upgraded, not created").isFalse();
        assertThat(PostgresSchema.migrate(schema)).as("nothing left to do").isFalse();
        execute(schema, resource(PostgresSchema.ROW_RULES_MIGRATION_RESOURCE)); // may run again
        execute(schema, resource(PostgresSchema.CLAIM_FRESH_MIGRATION_RESOURCE)); // may run again
        PostgresSchema.verify(schema, DEFAULTS);
        assertThat(queryOne(schema, """
                SELECT count(*) FILTER (WHERE contype = 'c')::text || ' checks, '
                    || (SELECT count(*) FROM pg_attribute WHERE attrelid = 'idempotency_records'::regclass
                        AND attgenerated <> '')::text || ' generated, '
                    || (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'idempotency_records'::regclass
                        AND NOT tgisinternal)::text || ' trigger'
                FROM pg_constraint WHERE conrelid = 'idempotency_records'::regclass
                """)).isEqualTo("0 checks, 0 generated, 1 trigger");
        // the values the generated column computed are kept
        assertThat(recoveryDueIsLease(schema, phase)).isTrue();
        assertThat(queryOne(
                        schema,
                        "SELECT count(*)::text FROM idempotency_records WHERE recovery_due IS NULL "
                                + "AND scope_key IN ('" + finished.hash() + "', '" + deadLetter.hash() + "')"))
                .isEqualTo("2");

        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(schema);
                Connection c = schema.getConnection()) {
            // recovery still finds the phase whose lease ran out, and only it
            assertThat(store.takeOverExpired(c, Duration.ofMinutes(1), 10))
                    .extracting(row ->
                            ((ClaimOutcome.Claimed) row.outcome()).record().key())
                    .containsExactly(phase);
            assertThat(recoveryDueIsLease(schema, phase))
                    .as("the takeover's new lease")
                    .isTrue();
            assertThat(store.claim(
                            finished, fingerprint, OwnerToken.random(), Duration.ofMinutes(1), Duration.ofHours(1)))
                    .isInstanceOf(ClaimOutcome.Finished.class);
        }
    }

    @Test
    void aTableOfTheTenthMigrationWithLiveRowsGetsTheRowRulesInFewerStepsWithTheSameRuleAndRecoveryDue()
            throws SQLException {
        DataSource schema = TestPostgres.freshSchema("schema_v10");
        migrateUpTo(schema, PostgresSchema.CLAIM_FRESH_MIGRATION_RESOURCE);
        Fingerprint fingerprint = TestDatabase.randomFingerprint();
        ScopeKey finished = TestDatabase.randomKey();
        ScopeKey inFlight = TestDatabase.randomKey();
        ScopeKey phase = TestDatabase.randomKey();
        ScopeKey deadLetter = TestDatabase.randomKey();
        // rows as V10 left them, recovery_due written by V9's trigger
        execute(
                schema,
                INSERT_ROWS
                        + row(
                                finished,
                                "COMPLETED",
                                fingerprint,
                                "o1",
                                "now()",
                                "NULL",
                                "now() + interval '1 hour'",
                                FINISHED,
                                "NULL")
                        + ", "
                        + row(
                                inFlight,
                                "PROCESSING",
                                fingerprint,
                                "o2",
                                "now()",
                                "now() + interval '1 minute'",
                                "now() + interval '1 hour'",
                                UNFINISHED,
                                "NULL")
                        + ", "
                        + row(
                                phase,
                                "PROCESSING",
                                fingerprint,
                                "o3",
                                "now() - interval '2 hours'",
                                "now() - interval '1 minute'",
                                "'infinity'",
                                UNFINISHED,
                                "NULL")
                        + ", "
                        + row(
                                deadLetter,
                                "PROCESSING",
                                fingerprint,
                                "o4",
                                "now() - interval '2 hours'",
                                "now() - interval '1 minute'",
                                "'infinity'",
                                UNFINISHED,
                                "now()"));
        assertThat(recoveryDueIsLease(schema, phase)).isTrue();
        String v9Function =
                "SELECT md5(prosrc) FROM pg_proc WHERE oid = to_regprocedure('idempotency_records_row_rules()')";
        String before = queryOne(schema, v9Function);

        assertThat(PostgresSchema.migrate(schema)).as("upgraded, not created").isFalse();
        assertThat(queryOne(schema, v9Function))
                .as("the trigger's function is replaced")
                .isNotEqualTo(before);
        assertThat(queryOne(
                        schema,
                        "SELECT obj_description(to_regprocedure('idempotency_records_row_rules()'), " + "'pg_proc')"))
                .contains("migration V12");
        assertThat(PostgresSchema.migrate(schema)).as("nothing left to do").isFalse();
        execute(schema, resource(PostgresSchema.ROW_RULES_STEPS_MIGRATION_RESOURCE)); // may run again
        assertThat(queryOne(
                        schema,
                        "SELECT obj_description(to_regprocedure('idempotency_records_row_rules()'), " + "'pg_proc')"))
                .as("V11's function again")
                .contains("migration V11");
        assertThat(PostgresSchema.migrate(schema))
                .as("V12's function restored, nothing created")
                .isFalse();
        assertThat(queryOne(
                        schema,
                        "SELECT obj_description(to_regprocedure('idempotency_records_row_rules()'), " + "'pg_proc')"))
                .contains("migration V12");
        PostgresSchema.verify(schema, DEFAULTS);
        // the rows are as they were
        assertThat(recoveryDueIsLease(schema, phase)).isTrue();
        assertThat(queryOne(
                        schema,
                        "SELECT count(*)::text FROM idempotency_records WHERE recovery_due IS NULL AND "
                                + "scope_key IN ('" + finished.hash() + "', '" + inFlight.hash() + "', '"
                                + deadLetter.hash() + "')"))
                .isEqualTo("3");
        // the same rule, the same error
        assertThatThrownBy(() -> execute(
                        schema,
                        "UPDATE idempotency_records SET status = 'COMPLETED' WHERE scope_key = '" + inFlight.hash()
                                + "'"))
                .hasRootCauseInstanceOf(org.postgresql.util.PSQLException.class)
                .rootCause()
                .satisfies(e -> {
                    org.postgresql.util.PSQLException p = (org.postgresql.util.PSQLException) e;
                    assertThat(p.getSQLState()).isEqualTo("23514");
                    assertThat(p.getServerErrorMessage().getConstraint()).isEqualTo("idempotency_records_status_check");
                });
        // a row that had a recovery_due it must not keep loses it
        execute(
                schema,
                "UPDATE idempotency_records SET recovery_due = lease_expires_at WHERE scope_key = '" + inFlight.hash()
                        + "'");
        assertThat(queryOne(
                        schema,
                        "SELECT (recovery_due IS NULL)::text FROM idempotency_records WHERE scope_key = '"
                                + inFlight.hash() + "'"))
                .isEqualTo("true");

        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(schema);
                Connection c = schema.getConnection()) {
            assertThat(store.complete(
                            inFlight, new OwnerToken("o2"), RecordStatus.COMPLETED, TestDatabase.response(201, "{}")))
                    .isTrue();
            assertThat(store.claim(
                            inFlight, fingerprint, OwnerToken.random(), Duration.ofMinutes(1), Duration.ofHours(1)))
                    .isInstanceOf(ClaimOutcome.Finished.class);
            assertThat(store.claim(
                            finished, fingerprint, OwnerToken.random(), Duration.ofMinutes(1), Duration.ofHours(1)))
                    .isInstanceOf(ClaimOutcome.Finished.class);
            assertThat(store.takeOverExpired(c, Duration.ofMinutes(1), 10))
                    .extracting(row ->
                            ((ClaimOutcome.Claimed) row.outcome()).record().key())
                    .containsExactly(phase);
            assertThat(recoveryDueIsLease(schema, phase))
                    .as("the takeover's new lease")
                    .isTrue();
        }
    }

    @Test
    void aTableOfTheEleventhMigrationWithLiveRowsGetsTheReplayColumnAndItsRecordsReplayAsBefore() throws SQLException {
        DataSource schema = TestPostgres.freshSchema("schema_v11");
        migrateUpTo(schema, PostgresSchema.ROW_RULES_STEPS_MIGRATION_RESOURCE);
        Fingerprint fingerprint = TestDatabase.randomFingerprint();
        ScopeKey finished = TestDatabase.randomKey();
        ScopeKey inFlight = TestDatabase.randomKey();
        execute(
                schema,
                INSERT_ROWS
                        + row(
                                finished,
                                "COMPLETED",
                                fingerprint,
                                "o1",
                                "now()",
                                "NULL",
                                "now() + interval '1 hour'",
                                FINISHED,
                                "NULL")
                        + ", "
                        + row(
                                inFlight,
                                "PROCESSING",
                                fingerprint,
                                "o2",
                                "now()",
                                "now() + interval '1 minute'",
                                "now() + interval '1 hour'",
                                UNFINISHED,
                                "NULL"));
        assertThatThrownBy(() -> PostgresSchema.verify(schema, DEFAULTS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lacks the columns of " + PostgresSchema.REPLAY_MIGRATION_RESOURCE)
                .hasMessageContaining("(replay)");

        assertThat(PostgresSchema.migrate(schema)).as("upgraded, not created").isFalse();
        PostgresSchema.verify(schema, DEFAULTS);
        assertThat(PostgresSchema.migrate(schema)).as("nothing left to do").isFalse();
        execute(schema, resource(PostgresSchema.REPLAY_MIGRATION_RESOURCE)); // may run again
        assertThat(queryOne(schema, "SELECT count(*)::text FROM idempotency_records WHERE replay IS NULL"))
                .as("the rows are not rewritten")
                .isEqualTo("2");

        try (PostgresIdempotencyStore store = PostgresIdempotencyStore.create(schema)) {
            // a record finished before the migration has no replay column: the read goes on to the claim
            store.claimFirst("read");
            assertThat(store.claim(
                            finished, fingerprint, OwnerToken.random(), Duration.ofMinutes(1), Duration.ofHours(1)))
                    .isInstanceOfSatisfying(ClaimOutcome.Finished.class, f -> {
                        assertThat(f.record().response().body()).isEqualTo("{}".getBytes(StandardCharsets.UTF_8));
                        assertThat(f.record().response().headers())
                                .containsExactly(Map.entry("content-type", List.of("application/json")));
                        assertThat(f.record().owner()).isEqualTo(new OwnerToken("o1"));
                    });
            // one finished after it has, and replays from it what its columns hold
            assertThat(store.complete(
                            inFlight,
                            new OwnerToken("o2"),
                            RecordStatus.COMPLETED,
                            TestDatabase.response(201, "{\"id\":2}")))
                    .isTrue();
            assertThat(queryOne(
                            schema,
                            "SELECT (replay IS NOT NULL)::text FROM idempotency_records WHERE scope_key = '"
                                    + inFlight.hash() + "'"))
                    .isEqualTo("true");
            store.claimFirst("read");
            assertThat(store.claim(
                            inFlight, fingerprint, OwnerToken.random(), Duration.ofMinutes(1), Duration.ofHours(1)))
                    .isInstanceOfSatisfying(
                            ClaimOutcome.Finished.class,
                            f -> assertThat(f.record())
                                    .isEqualTo(store.find(inFlight).orElseThrow()));
        }
    }

    private static boolean recoveryDueIsLease(DataSource schema, ScopeKey key) throws SQLException {
        return Boolean.parseBoolean(queryOne(
                schema,
                "SELECT (recovery_due IS NOT NULL AND recovery_due = lease_expires_at)::text "
                        + "FROM idempotency_records WHERE scope_key = '" + key.hash() + "'"));
    }

    private static String purgeAfter(DataSource schema, ScopeKey key) throws SQLException {
        return queryOne(
                schema, "SELECT purge_after::text FROM idempotency_records WHERE scope_key = '" + key.hash() + "'");
    }

    private static boolean purgeAfterIsExpiry(DataSource schema, ScopeKey key) throws SQLException {
        return Boolean.parseBoolean(queryOne(
                schema,
                "SELECT (purge_after = expires_at)::text FROM idempotency_records " + "WHERE scope_key = '" + key.hash()
                        + "'"));
    }

    private static boolean purgeAfterIsLowerBound(DataSource schema, ScopeKey key) throws SQLException {
        return Boolean.parseBoolean(queryOne(
                schema,
                "SELECT (purge_after <= expires_at AND purge_after = created_at + "
                        + "retention)::text FROM idempotency_records WHERE scope_key = '" + key.hash() + "'"));
    }

    private static String queryOne(DataSource schema, String sql) throws SQLException {
        try (Connection c = schema.getConnection();
                Statement s = c.createStatement();
                ResultSet rows = s.executeQuery(sql)) {
            assertThat(rows.next()).as(sql).isTrue();
            return rows.getString(1);
        }
    }

    @Test
    void extraColumnsAreAllowed() {
        DataSource schema = TestPostgres.freshSchema("schema_extra");
        PostgresSchema.migrate(schema);
        execute(schema, "ALTER TABLE idempotency_records ADD COLUMN audit_note text");

        PostgresSchema.verify(schema, DEFAULTS);
    }

    @Test
    void aUserWhoMayNotWriteTheTableIsTold() {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("schema_grants");
        PostgresSchema.migrate(schema);
        String role = "exactly_reader_" + ProcessHandle.current().pid();
        execute(schema, "DROP ROLE IF EXISTS " + role);
        execute(schema, "CREATE ROLE " + role + " NOLOGIN");
        try {
            execute(schema, "GRANT USAGE ON SCHEMA " + schema.getCurrentSchema() + " TO " + role);
            execute(schema, "GRANT SELECT, INSERT ON idempotency_records TO " + role);
            PGSimpleDataSource asReader = new PGSimpleDataSource();
            asReader.setUrl(schema.getUrl());
            asReader.setOptions("-c role=" + role);

            assertThatThrownBy(() -> PostgresSchema.verify(asReader, DEFAULTS))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("user " + role
                            + " may not SELECT, INSERT, UPDATE and DELETE rows of the idempotency table "
                            + schema.getCurrentSchema() + ".idempotency_records: grant these privileges to that user");

            execute(schema, "GRANT UPDATE, DELETE ON idempotency_records TO " + role);
            PostgresSchema.verify(asReader, DEFAULTS);
        } finally {
            execute(schema, "DROP OWNED BY " + role);
            execute(schema, "DROP ROLE " + role);
        }
    }

    @Test
    void anUnreachableServerIsUnavailableNotAMissingTable() {
        PGSimpleDataSource unreachable = new PGSimpleDataSource();
        unreachable.setUrl("jdbc:postgresql://127.0.0.1:" + TestRedis.freePort() + "/test?user=postgres");
        unreachable.setLoginTimeout(3);

        assertThatThrownBy(() -> PostgresSchema.verify(unreachable, DEFAULTS))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("schema check of idempotency_records: could not reach PostgreSQL");
    }

    private static boolean leaseIndexExists(DataSource dataSource) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet row = s.executeQuery("SELECT to_regclass('idempotency_records_lease_idx') IS NOT NULL")) {
            row.next();
            return row.getBoolean(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> indexes(DataSource dataSource) throws SQLException {
        List<String> names = new ArrayList<>();
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rows = s.executeQuery(
                        "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = 'idempotency_records'::regclass")) {
            while (rows.next()) {
                names.add(rows.getString(1));
            }
        }
        return names;
    }

    /** The start of an INSERT of rows as a store of V2 or later wrote them (see {@link #row}). */
    private static final String INSERT_ROWS = "INSERT INTO idempotency_records (scope_key, status, fingerprint, "
            + "owner_token, created_at, lease_expires_at, expires_at, retention, response_status, response_headers, "
            + "response_body, updated_at, dead_lettered_at) VALUES ";
    /** The response columns of a finished record in {@link #row}. */
    private static final String FINISHED = "201, '{content-type,application/json}', '\\x7b7d'";
    /** The response columns of a record in flight in {@link #row}. */
    private static final String UNFINISHED = "NULL, NULL, NULL";

    /** One row of {@link #INSERT_ROWS}, retention one hour; times and responses are SQL as given. */
    private static String row(
            ScopeKey key,
            String status,
            Fingerprint fingerprint,
            String owner,
            String createdAt,
            String leaseExpiresAt,
            String expiresAt,
            String response,
            String deadLetteredAt) {
        return "('" + key.hash() + "', '" + status + "', '" + fingerprint.encoded() + "', '" + owner + "', " + createdAt
                + ", " + leaseExpiresAt + ", " + expiresAt + ", interval '1 hour', " + response + ", now(), "
                + deadLetteredAt + ")";
    }

    /** Runs the migration scripts in order, up to and including {@code last}, as Flyway would. */
    private static void migrateUpTo(DataSource schema, String last) {
        List<String> migrations = List.of(
                PostgresSchema.MIGRATION_RESOURCE,
                PostgresSchema.PHASES_MIGRATION_RESOURCE,
                PostgresSchema.WAITERS_MIGRATION_RESOURCE,
                PostgresSchema.CLAIM_MIGRATION_RESOURCE,
                PostgresSchema.LEASE_INDEX_MIGRATION_RESOURCE,
                PostgresSchema.HOT_COMPLETION_MIGRATION_RESOURCE,
                PostgresSchema.CLAIM_RECORD_MIGRATION_RESOURCE,
                PostgresSchema.PURGE_AFTER_MIGRATION_RESOURCE,
                PostgresSchema.ROW_RULES_MIGRATION_RESOURCE,
                PostgresSchema.CLAIM_FRESH_MIGRATION_RESOURCE,
                PostgresSchema.ROW_RULES_STEPS_MIGRATION_RESOURCE);
        for (String resource : migrations.subList(0, migrations.indexOf(last) + 1)) {
            execute(schema, resource(resource));
        }
    }

    private static String resource(String resource) {
        try (InputStream in = PostgresSchema.class.getResourceAsStream("/" + resource)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void execute(DataSource dataSource, String sql) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
