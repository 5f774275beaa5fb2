package dev.exactly.benchmarks.store;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * A single-row {@code INSERT ... ON CONFLICT DO NOTHING} in autocommit on the store's own pool: one
 * round trip and one commit, the least a durable claim can cost.
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

    private final DataSource pool;
    private final byte[] value;

    private PostgresRawBaseline(DataSource pool, String value) {
        this.pool = pool;
        this.value = value.getBytes(StandardCharsets.UTF_8);
    }

    /** Creates the baseline's table in the pool's schema. */
    static PostgresRawBaseline create(DataSource pool, String value) {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute(CREATE);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create the baseline table", e);
        }
        return new PostgresRawBaseline(pool, value);
    }

    @Override
    public String operation() {
        return "INSERT ... ON CONFLICT DO NOTHING (autocommit)";
    }

    @Override
    public boolean insertIfAbsent(String key) {
        try (Connection c = pool.getConnection(); PreparedStatement s = c.prepareStatement(INSERT)) {
            s.setString(1, key);
            s.setBytes(2, value);
            return s.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IllegalStateException("baseline insert failed", e);
        }
    }

    @Override
    public void close() {
        // the pool belongs to the fixture
    }
}
