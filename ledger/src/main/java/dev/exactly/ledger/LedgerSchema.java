package dev.exactly.ledger;

import dev.exactly.ledger.internal.Jdbc;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The ledger's schema, shipped as the Flyway-style migration {@value #MIGRATION_RESOURCE} (plain SQL,
 * unqualified {@code ledger_*} names, created in the connection's current schema). An application that
 * runs Flyway adds the location {@value #FLYWAY_LOCATION}; tests and simple applications call
 * {@link #migrate(DataSource)}.
 */
public final class LedgerSchema {

    /** The classpath resource of the version 1 migration. */
    public static final String MIGRATION_RESOURCE = "db/ledger/V1__ledger.sql";

    /** The Flyway location holding the ledger's migrations. */
    public static final String FLYWAY_LOCATION = "classpath:db/ledger";

    /** One migration at a time per schema. */
    private static final String MIGRATION_LOCK = """
            SELECT pg_advisory_xact_lock(hashtext('dev.exactly.ledger:' || current_schema()))
            """;

    private static final String SCHEMA_PRESENT = """
            SELECT EXISTS (
                SELECT 1 FROM pg_catalog.pg_tables
                WHERE schemaname = current_schema() AND tablename = 'ledger_entry'
            )
            """;

    private LedgerSchema() {}

    /** The SQL text of the version 1 migration. */
    public static String migrationSql() {
        try (InputStream in = LedgerSchema.class.getClassLoader().getResourceAsStream(MIGRATION_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(MIGRATION_RESOURCE + " is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Creates the ledger's tables in the current schema of {@code dataSource}'s connections unless they
     * exist, in one transaction under an advisory lock (so concurrent callers create them once).
     *
     * @return whether the schema was created by this call
     * @throws LedgerException when the database refuses
     */
    public static boolean migrate(DataSource dataSource) {
        String sql = migrationSql();
        return Jdbc.inTransaction(dataSource, c -> {
            try (Statement s = c.createStatement()) {
                s.execute(MIGRATION_LOCK);
                try (ResultSet rs = s.executeQuery(SCHEMA_PRESENT)) {
                    rs.next();
                    if (rs.getBoolean(1)) {
                        return false;
                    }
                }
                s.execute(sql);
                return true;
            }
        });
    }
}
