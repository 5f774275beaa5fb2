package dev.exactly.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The PostgreSQL server tests use: {@code 127.0.0.1:5432}, database {@code test}, user {@code postgres}
 * (override with {@code EXACTLY_TEST_POSTGRES_URL}), or an embedded server when that is absent and
 * {@code CI} is not {@code true}.
 */
public final class TestPostgres {
    private static final String DEFAULT_URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private static @Nullable String baseUrl;
    private static @Nullable EmbeddedPostgres embedded;

    private TestPostgres() {}

    /** The JDBC URL of the server (found or started once per JVM). */
    public static synchronized String jdbcUrl() {
        if (baseUrl != null) {
            return baseUrl;
        }
        String url = System.getenv().getOrDefault("EXACTLY_TEST_POSTGRES_URL", DEFAULT_URL);
        try (Connection c = DriverManager.getConnection(url + (url.contains("?") ? "&" : "?") + "connectTimeout=3")) {
            c.isValid(3);
            baseUrl = url;
        } catch (SQLException e) {
            Ci.requireOrFallback("PostgreSQL", url, e);
            try {
                embedded = EmbeddedPostgres.builder().start();
            } catch (IOException io) {
                throw new UncheckedIOException("could not start embedded PostgreSQL", io);
            }
            EmbeddedPostgres started = embedded;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    started.close();
                } catch (IOException ignored) {
                    // the JVM is going away
                }
            }));
            baseUrl = started.getJdbcUrl("postgres", "postgres");
        }
        return baseUrl;
    }

    /** A data source on the server's default schema. */
    public static DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl());
        return ds;
    }

    /**
     * A data source whose connections use a new, empty schema (dropped first if it exists), so that
     * test classes and modules running at the same time never see each other's tables.
     */
    public static DataSource freshSchema(String prefix) {
        String schema = (prefix + "_" + ProcessHandle.current().pid() + "_" + SCHEMAS.incrementAndGet())
                .toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            s.execute("CREATE SCHEMA " + schema);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create schema " + schema, e);
        }
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl());
        ds.setCurrentSchema(schema);
        return ds;
    }
}
