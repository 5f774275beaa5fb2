package dev.exactly.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The PostgreSQL server tests use: {@code 127.0.0.1:5432}, database {@code test}, user {@code postgres}
 * (override with {@code EXACTLY_TEST_POSTGRES_URL}), or an embedded server when that is absent and
 * {@code CI} is not {@code true}. The schemas a test JVM creates ({@link #freshSchema}) are dropped when it
 * exits, so that repeated runs do not pile them up in the database; {@code EXACTLY_TEST_KEEP_SCHEMAS=true}
 * keeps them for a look afterwards.
 */
public final class TestPostgres {
    private static final String DEFAULT_URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    /** How long the drop of one schema at exit waits for a lock a connection still holds, in ms. */
    private static final int DROP_LOCK_TIMEOUT_MS = 1_000;
    /** The drops at exit stop after this long, in ns: a JVM's exit is not held up by a stuck server. */
    private static final long DROP_BUDGET_NANOS = 10_000_000_000L;

    private static final int DROP_CONNECT_TIMEOUT_S = 3;
    private static final int DROP_SOCKET_TIMEOUT_S = 10;
    private static final Set<String> CREATED = new LinkedHashSet<>();
    private static boolean dropAtExit;
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
                .toLowerCase(java.util.Locale.ROOT)
                .replaceAll("[^a-z0-9_]", "_");
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            s.execute("CREATE SCHEMA " + schema);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create schema " + schema, e);
        }
        created(schema);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl());
        ds.setCurrentSchema(schema);
        return ds;
    }

    private static synchronized void created(String schema) {
        CREATED.add(schema);
        if (!dropAtExit && !"true".equalsIgnoreCase(System.getenv("EXACTLY_TEST_KEEP_SCHEMAS"))) {
            dropAtExit = true;
            Runtime.getRuntime().addShutdownHook(new Thread(TestPostgres::dropCreatedSchemas, "test-schemas-drop"));
        }
    }

    /**
     * Drops every schema this JVM created, each with its objects, and returns those it could not drop (a
     * connection still held a lock past the timeout, or the server was gone); never throws.
     */
    static synchronized List<String> dropCreatedSchemas() {
        List<String> left = new ArrayList<>();
        if (CREATED.isEmpty()) {
            return left;
        }
        long deadline = System.nanoTime() + DROP_BUDGET_NANOS;
        PGSimpleDataSource server = new PGSimpleDataSource();
        server.setUrl(jdbcUrl());
        server.setConnectTimeout(DROP_CONNECT_TIMEOUT_S); // a server that stopped answering does not hold up the exit
        server.setSocketTimeout(DROP_SOCKET_TIMEOUT_S);
        try (Connection c = server.getConnection();
                Statement s = c.createStatement()) {
            s.execute("SET lock_timeout = " + DROP_LOCK_TIMEOUT_MS);
            for (String schema : CREATED) {
                if (System.nanoTime() - deadline > 0) {
                    left.add(schema);
                    continue;
                }
                try {
                    s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                } catch (SQLException e) {
                    left.add(schema);
                }
            }
        } catch (SQLException | RuntimeException e) {
            CREATED.stream().filter(schema -> !left.contains(schema)).forEach(left::add);
        }
        CREATED.clear();
        CREATED.addAll(left);
        return left;
    }
}
