package dev.exactly.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL server of a test's own and one connection to it, taken while the server answered, handed out
 * by {@link #dataSource()} and never closed by its users: what a pool hands out when it skips the check of a
 * connection it used a moment ago. A test {@link #freeze()}s the server under it to see what a statement on
 * an established connection does when no answer comes. The driver's own bound on a cancel request
 * ({@code cancelSignalTimeout}, 10 s by default) is 2 s here; a statement waits it out after its cancel.
 */
public final class HeldConnection implements AutoCloseable {
    private final OwnPostgres postgres;
    private final Connection physical;
    private final DataSource dataSource;

    private HeldConnection(OwnPostgres postgres, Connection physical) {
        this.postgres = postgres;
        this.physical = physical;
        Connection kept = (Connection) Proxy.newProxyInstance(
                HeldConnection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(physical, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        this.dataSource = new PGSimpleDataSource() {
            @Override
            public Connection getConnection() {
                return kept;
            }
        };
    }

    /** Starts a server (data in a new temporary directory named after {@code prefix}) and connects to it. */
    public static HeldConnection start(String prefix) {
        OwnPostgres postgres;
        try {
            postgres = OwnPostgres.start(Files.createTempDirectory(prefix).resolve("pg"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        PGSimpleDataSource direct = (PGSimpleDataSource) postgres.dataSource();
        direct.setCancelSignalTimeout(2);
        try {
            return new HeldConnection(postgres, direct.getConnection());
        } catch (SQLException e) {
            postgres.close();
            throw new IllegalStateException("could not connect to " + postgres.jdbcUrl(), e);
        }
    }

    /** Hands out the held connection, whose {@code close()} does nothing. */
    public DataSource dataSource() {
        return dataSource;
    }

    /** The connection itself (closed when it was aborted). */
    public Connection physical() {
        return physical;
    }

    /** The server's URL, for connections of a test's own (a pool) beside the held one. */
    public String jdbcUrl() {
        return postgres.jdbcUrl();
    }

    /** See {@link OwnPostgres#freeze()}. */
    public void freeze() {
        postgres.freeze();
    }

    /** Thaws the server, closes the connection and stops the server. */
    @Override
    public void close() throws SQLException {
        try {
            postgres.thaw();
            physical.close();
        } finally {
            postgres.close();
        }
    }
}
