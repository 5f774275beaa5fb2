package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.StoreUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The table of {@link PostgresIdempotencyStore}, shipped as the Flyway-style migration
 * {@value #MIGRATION_RESOURCE} (its table name is unqualified, so it lands in the first schema of the
 * connection's {@code search_path}). Applications that run Flyway may run the same file; simple
 * applications and tests call {@link #migrate}.
 */
public final class PostgresSchema {
    /** The class-path resource of the migration. */
    public static final String MIGRATION_RESOURCE = "db/idempotency/V1__idempotency_records.sql";

    /** Resolves the table through the search_path, like every statement of the store. */
    private static final String TABLE_EXISTS = """
            SELECT to_regclass(?) IS NOT NULL
            """;
    /** Serialises concurrent migrations of one table (several instances starting at once). */
    private static final String LOCK = """
            SELECT pg_advisory_xact_lock(hashtext('dev.exactly.idempotency.postgres'), hashtext(?))
            """;

    private PostgresSchema() {}

    /** The migration script for the configured table name (the resource as is for the default name). */
    public static String script(PostgresStoreConfig config) {
        try (InputStream in = PostgresSchema.class.getClassLoader().getResourceAsStream(MIGRATION_RESOURCE)) {
            Objects.requireNonNull(in, MIGRATION_RESOURCE + " is missing from the class path");
            return Sql.onTable(new String(in.readAllBytes(), StandardCharsets.UTF_8), config.tableName());
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + MIGRATION_RESOURCE, e);
        }
    }

    /** Creates the default table if it is missing; see {@link #migrate(DataSource, PostgresStoreConfig)}. */
    public static boolean migrate(DataSource dataSource) {
        return migrate(dataSource, PostgresStoreConfig.ofDefaults());
    }

    /**
     * Creates the configured table and its indexes if the table is missing, in one transaction under an
     * advisory lock, so that instances starting together do not race.
     *
     * @return whether the table was created
     * @throws StoreUnavailableException if PostgreSQL failed or could not be reached
     */
    public static boolean migrate(DataSource dataSource, PostgresStoreConfig config) {
        Jdbc jdbc = new Jdbc(config.statementTimeout().multipliedBy(5));
        String table = config.tableName();
        try (Connection connection = dataSource.getConnection()) {
            if (tableExists(jdbc, connection, table)) {
                return false;
            }
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                jdbc.query(connection, LOCK, s -> s.setString(1, table), row -> true);
                boolean created = !tableExists(jdbc, connection, table);
                if (created) {
                    jdbc.execute(connection, script(config));
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

    private static boolean tableExists(Jdbc jdbc, Connection connection, String table) throws SQLException {
        List<Boolean> exists = jdbc.query(connection, TABLE_EXISTS, s -> s.setString(1, table), row -> row.getBoolean(1));
        return exists.getFirst();
    }
}
