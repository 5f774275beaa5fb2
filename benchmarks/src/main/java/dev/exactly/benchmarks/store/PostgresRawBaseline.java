package dev.exactly.benchmarks.store;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Raw PostgreSQL on the store's own pool, each statement in autocommit on a connection taken from the
 * pool for it (as the store does): a fresh key is a single-row {@code INSERT ... ON CONFLICT DO NOTHING}
 * commit and then an {@code UPDATE} commit of that row; a replay is one {@code SELECT} by primary key.
 */
final class PostgresRawBaseline implements RawBaseline {
    private static final String CREATE = """
            CREATE TABLE IF NOT EXISTS bench_raw (
                k text PRIMARY KEY,
                v bytea NOT NULL
            )
            """;
    private static final String INSERT = """
            INSERT INTO bench_raw (k, v) VALUES (?, ?)
            ON CONFLICT DO NOTHING
            """;
    private static final String UPDATE = """
            UPDATE bench_raw SET v = ? WHERE k = ?
            """;
    private static final String SELECT = """
            SELECT v FROM bench_raw WHERE k = ?
            """;
    private static final byte[] PLACEHOLDER = "processing".getBytes(StandardCharsets.US_ASCII);

    private final DataSource pool;

    private PostgresRawBaseline(DataSource pool) {
        this.pool = pool;
    }

    /** Creates the baseline's table in the pool's schema. */
    static PostgresRawBaseline create(DataSource pool) {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement()) {
            s.execute(CREATE);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create the baseline table", e);
        }
        return new PostgresRawBaseline(pool);
    }

    @Override
    public String freshOperations() {
        return "INSERT ... ON CONFLICT DO NOTHING, then UPDATE (two autocommit statements)";
    }

    @Override
    public String replayOperation() {
        return "SELECT by primary key";
    }

    @Override
    public boolean claim(String key) {
        try (Connection c = pool.getConnection();
                PreparedStatement s = c.prepareStatement(INSERT)) {
            s.setString(1, key);
            s.setBytes(2, PLACEHOLDER);
            return s.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IllegalStateException("baseline insert failed", e);
        }
    }

    @Override
    public boolean finish(String key, byte[] value) {
        try (Connection c = pool.getConnection();
                PreparedStatement s = c.prepareStatement(UPDATE)) {
            s.setBytes(1, value);
            s.setString(2, key);
            return s.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IllegalStateException("baseline update failed", e);
        }
    }

    @Override
    public byte @Nullable [] read(String key) {
        try (Connection c = pool.getConnection();
                PreparedStatement s = c.prepareStatement(SELECT)) {
            s.setString(1, key);
            try (ResultSet row = s.executeQuery()) {
                return row.next() ? row.getBytes(1) : null;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("baseline select failed", e);
        }
    }

    @Override
    public void close() {
        // the pool belongs to the fixture
    }
}
