package dev.exactly.payments.config;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The database: {@code exactly.payments.database-url} ({@code DATABASE_URL}) when set, otherwise an
 * embedded PostgreSQL started from the binaries of a Maven artifact, with its data in a temporary
 * directory that is removed on shutdown. The schema is migrated by Flyway before anything uses it:
 * three migration sets, each with its own history table, so their version numbers never clash.
 */
@Configuration(proxyBeanMethods = false)
public class DatabaseConfiguration {
    private static final Logger log = LoggerFactory.getLogger(DatabaseConfiguration.class);

    /** The migration sets, in order, with their history tables. */
    static final String[][] MIGRATIONS = {
        {"classpath:db/ledger", "flyway_history_ledger"},
        {"classpath:db/idempotency", "flyway_history_idempotency"},
        {"classpath:db/payments", "flyway_history_payments"},
    };

    /** The embedded server, or nothing when a database is configured. */
    @Bean(destroyMethod = "close")
    EmbeddedDatabase embeddedDatabase(PaymentsProperties properties) {
        if (!properties.databaseUrl().isBlank()) {
            return new EmbeddedDatabase(null, null);
        }
        try {
            Path dir = Files.createTempDirectory("exactly-pg-");
            log.info("no DATABASE_URL: starting an embedded PostgreSQL in {}", dir);
            EmbeddedPostgres postgres = EmbeddedPostgres.builder()
                    .setDataDirectory(dir)
                    .setCleanDataDirectory(true)
                    .start();
            return new EmbeddedDatabase(postgres, dir);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded PostgreSQL", e);
        }
    }

    /**
     * The pool. Every read of an answer from the database is bounded by {@code database-socket-timeout}: a
     * database that stops answering (frozen, or behind a network that drops packets without a reset) fails
     * the call after it, so the request answers (outcome unknown, if it had written) and recovery settles it
     * later, instead of holding its key and its client until the operating system gives up on the
     * connection, hours later. The migrations run first on connections of their own without the bound: an
     * index built on a large table may take longer than any request should wait.
     */
    @Bean(destroyMethod = "close")
    HikariDataSource dataSource(
            PaymentsProperties properties,
            EmbeddedDatabase embedded,
            @Value("${exactly.payments.pool-size:20}") int poolSize,
            @Value("${exactly.payments.database-socket-timeout:30s}") Duration socketTimeout) {
        if (socketTimeout.isNegative() || socketTimeout.isZero()) {
            throw new IllegalArgumentException(
                    "exactly.payments.database-socket-timeout must be positive, not " + socketTimeout);
        }
        HikariConfig migrations = connections(properties, embedded);
        migrations.setPoolName("payments-migrations");
        // the schema's migration lock on one connection (migrate), Flyway's lock on a second, its work on a third
        migrations.setMaximumPoolSize(4);
        migrations.setMinimumIdle(0);
        try (HikariDataSource migrating = new HikariDataSource(migrations)) {
            migrate(migrating);
        }
        HikariConfig config = connections(properties, embedded);
        config.setPoolName("payments");
        config.setMaximumPoolSize(poolSize);
        config.setConnectionTimeout(5_000);
        // pgjdbc counts whole seconds: a bound of 1.5 s waits 2 s
        config.addDataSourceProperty(
                "socketTimeout", String.valueOf(socketTimeout.plusMillis(999).toSeconds()));
        // a paused or abandoned transaction must not hold an idempotency record or a balance row forever;
        // and no commit is acknowledged before it is on disk (see durableCommits)
        config.setConnectionInitSql("SET idle_in_transaction_session_timeout = '60s'; " + DURABLE_COMMITS);
        HikariDataSource dataSource = new HikariDataSource(config);
        try {
            warnIfNotFlushed(dataSource);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
        return dataSource;
    }

    /**
     * Run on every connection of the pool: a session whose commits would be acknowledged before they are
     * flushed ({@code synchronous_commit = off}: the default of the embedded server, of a role or database
     * someone tuned, of many tuning guides) commits synchronously. Phase 1 of a charge commits its row, with
     * the processor's idempotency key derived from its id, before the processor is asked to move money; an
     * asynchronous commit lost in a crash after that call leaves a charge the service no longer knows, and
     * the retry charges again under a new id. A stronger setting ({@code remote_write}, {@code remote_apply})
     * is kept, and {@code local} flushes locally already.
     */
    static final String DURABLE_COMMITS = "SELECT set_config('synchronous_commit', 'on', false) "
            + "WHERE current_setting('synchronous_commit') = 'off'";

    /**
     * A server that does not flush its writes at all ({@code fsync = off}) can lose committed charges when
     * its machine crashes, and no session setting overrules it: said at startup, once.
     */
    private static void warnIfNotFlushed(DataSource dataSource) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW fsync")) {
            if (rs.next() && "off".equals(rs.getString(1))) {
                log.warn("the database runs with fsync = off: a crash of its machine can lose committed charges "
                        + "and their ledger entries after the processor moved the money; set fsync = on");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the database's fsync setting", e);
        }
    }

    /** Where and as whom to connect: the configured database, or the embedded one. */
    private static HikariConfig connections(PaymentsProperties properties, EmbeddedDatabase embedded) {
        HikariConfig config = new HikariConfig();
        if (embedded.postgres() != null) {
            config.setJdbcUrl(embedded.postgres().getJdbcUrl("postgres", "postgres"));
        } else {
            DatabaseUrl url = DatabaseUrl.parse(properties.databaseUrl());
            config.setJdbcUrl(url.jdbcUrl());
            if (url.user() != null) {
                config.setUsername(url.user());
            }
            if (url.password() != null) {
                config.setPassword(url.password());
            }
        }
        return config;
    }

    /**
     * Runs the three migration sets, one instance at a time per schema. Flyway's own lock covers applying a
     * set's migrations, not its first look at the schema: an instance that found a set's schema history table
     * that another had just created, not yet holding a row, took the schema for one to baseline and failed to
     * start ("Unable to baseline schema history table ... as it already exists, and is empty"), as two
     * replicas deployed at once on a new database would. So every instance first takes a session advisory lock
     * of the schema on a connection of its own and keeps it until all three sets are done; the next one then
     * finds them migrated. The lock ends with its session, so an instance that dies mid-migration frees it.
     */
    public static void migrate(DataSource dataSource) {
        try (Connection lock = dataSource.getConnection()) {
            try (Statement s = lock.createStatement()) {
                s.execute(MIGRATION_LOCK);
            }
            try {
                for (String[] set : MIGRATIONS) {
                    Flyway.configure()
                            .dataSource(dataSource)
                            .locations(set[0])
                            .table(set[1])
                            .baselineOnMigrate(true)
                            .baselineVersion("0")
                            .load()
                            .migrate();
                }
            } finally {
                unlock(lock);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not take the lock of the schema's migrations", e);
        }
    }

    /** Gives the schema's migration lock back; a failure here must not hide the migration's own. */
    private static void unlock(Connection lock) {
        try (Statement s = lock.createStatement()) {
            s.execute(MIGRATION_UNLOCK);
        } catch (SQLException e) {
            // the lock ends with the session, which the caller's pool closes
            log.warn("could not give back the lock of the schema's migrations: {}", e.getMessage());
        }
    }

    private static final String MIGRATION_LOCK = "SELECT pg_advisory_lock(hashtext('dev.exactly.payments.migrations'), "
            + "hashtext(coalesce(current_schema(), '')))";
    private static final String MIGRATION_UNLOCK =
            "SELECT pg_advisory_unlock(hashtext('dev.exactly.payments.migrations'), "
                    + "hashtext(coalesce(current_schema(), '')))";

    /**
     * The embedded server and its data directory, when there is one.
     *
     * @param postgres  the server, or {@code null} when a database is configured
     * @param directory its data directory
     */
    public record EmbeddedDatabase(
            @Nullable EmbeddedPostgres postgres, @Nullable Path directory) {

        /** Stops the server; its data directory is removed with it. */
        public void close() throws IOException {
            if (postgres != null) {
                postgres.close();
            }
        }
    }
}
