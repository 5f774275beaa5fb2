package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresSchema;
import dev.exactly.idempotency.postgres.PostgresStoreConfig;
import javax.sql.DataSource;

/** Builds the PostgreSQL store from properties. Loaded only when the PostgreSQL module is on the class path. */
final class PostgresStores {
    private PostgresStores() {}

    static PostgresStoreConfig config(IdempotencyProperties.Postgres postgres) {
        try {
            return PostgresStoreConfig.custom()
                    .tableName(postgres.getTableName())
                    .notificationChannel(postgres.getNotificationChannel())
                    .statementTimeout(postgres.getStatementTimeout())
                    .build();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException(PropertiesReader.P + "postgres: " + e.getMessage(), e);
        }
    }

    /** The store on {@code dataSource}, after creating its table if {@code migrate} is set and it is missing. */
    static PostgresIdempotencyStore create(DataSource dataSource, IdempotencyProperties.Postgres postgres) {
        PostgresStoreConfig config = config(postgres);
        if (postgres.isMigrate()) {
            PostgresSchema.migrate(dataSource, config);
        }
        return PostgresIdempotencyStore.create(dataSource, config);
    }
}
