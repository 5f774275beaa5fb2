package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresSchema;
import dev.exactly.idempotency.postgres.PostgresStoreConfig;
import java.util.List;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/** Builds the PostgreSQL store from properties. Loaded only when the PostgreSQL module is on the class path. */
final class PostgresStores {
    /** The store's migration (a constant: other classes may use it without loading the PostgreSQL module). */
    static final String MIGRATION = PostgresSchema.MIGRATION_RESOURCE;
    /** The two ways a Spring Boot application gets the table (a constant, like {@link #MIGRATION}). */
    static final String HOW_TO_CREATE = "set " + PropertiesReader.P + "postgres.migrate=true to create the table ("
            + PropertiesReader.P + "postgres.table-name) at startup, or add classpath:db/idempotency to "
            + "spring.flyway.locations (the migration " + MIGRATION + ")";
    /** The two ways a Spring Boot application brings an older table up to date. */
    static final String HOW_TO_UPGRADE = "set " + PropertiesReader.P + "postgres.migrate=true to upgrade the table ("
            + PropertiesReader.P + "postgres.table-name) at startup, or add classpath:db/idempotency to "
            + "spring.flyway.locations";

    private static final Log log = LogFactory.getLog(PostgresStores.class);

    private PostgresStores() {}

    static PostgresStoreConfig config(IdempotencyProperties.Postgres postgres) {
        try {
            return PostgresStoreConfig.custom()
                    .tableName(postgres.getTableName())
                    .notificationChannel(postgres.getNotificationChannel())
                    .statementTimeout(postgres.getStatementTimeout())
                    .sharedStatementLanes(postgres.getSharedStatementLanes())
                    .maxSharedWrites(postgres.getMaxSharedWrites())
                    .build();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException(PropertiesReader.P + "postgres: " + e.getMessage(), e);
        }
    }

    /**
     * The store on {@code dataSource}, after creating its table if {@code migrate} is set and it is
     * missing (a migration that fails stops the startup), and checking the table: a missing or foreign
     * table stops the startup with the fix. Without {@code migrate}, a database that cannot be reached does
     * not (the application may start before it): that is logged, and guarded requests answer 503 until it
     * answers.
     */
    static PostgresIdempotencyStore create(DataSource dataSource, IdempotencyProperties.Postgres postgres) {
        PostgresStoreConfig config = config(postgres);
        if (postgres.isMigrate()) {
            try {
                PostgresSchema.migrate(dataSource, config);
            } catch (StoreUnavailableException e) {
                throw new InvalidIdempotencyPropertiesException(List.of(PropertiesReader.P
                        + "postgres.migrate=true, but "
                        + "the table could not be created: " + e.getMessage() + ". Check spring.datasource.url, "
                        + ".username and .password, and that PostgreSQL is up"));
            }
        }
        try {
            PostgresSchema.verify(dataSource, config, HOW_TO_CREATE);
        } catch (IllegalStateException e) {
            throw new InvalidIdempotencyPropertiesException(
                    List.of(PropertiesReader.P + "store=postgres, but " + e.getMessage()));
        } catch (StoreUnavailableException e) {
            log.warn("Could not check the idempotency table at startup; guarded requests answer 503 until "
                    + "PostgreSQL answers: " + e.getMessage());
        }
        return PostgresIdempotencyStore.create(dataSource, config);
    }
}
