package dev.exactly.idempotency.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.testing.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;

/** A fresh schema with the store's table, behind a connection pool. */
final class TestDatabase implements AutoCloseable {
    private final DataSource direct;
    private final HikariDataSource pool;

    private TestDatabase(DataSource direct, HikariDataSource pool) {
        this.direct = direct;
        this.pool = pool;
    }

    static TestDatabase create(String prefix, int poolSize) {
        TestDatabase database = createEmpty(prefix, poolSize);
        PostgresIdempotencyStore.migrate(database.pool);
        return database;
    }

    /** A fresh schema without the store's table. */
    static TestDatabase createEmpty(String prefix, int poolSize) {
        DataSource direct = TestPostgres.freshSchema(prefix);
        HikariConfig config = new HikariConfig();
        config.setDataSource(direct);
        config.setMaximumPoolSize(poolSize);
        config.setPoolName(prefix);
        return new TestDatabase(direct, new HikariDataSource(config));
    }

    /** The pool, as applications use the store. */
    DataSource pool() {
        return pool;
    }

    /** Unpooled connections on the same schema. */
    DataSource direct() {
        return direct;
    }

    /** Runs one SQL text on a direct connection. */
    void execute(String sql) {
        try (Connection c = direct.getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static ScopeKey randomKey() {
        byte[] bytes = new byte[32];
        ThreadLocalRandom.current().nextBytes(bytes);
        return new ScopeKey(HexFormat.of().formatHex(bytes));
    }

    /** The owner of a claim that must have succeeded. */
    static OwnerToken ownerOf(ClaimOutcome outcome) {
        if (outcome instanceof ClaimOutcome.Claimed claimed) {
            return claimed.owner();
        }
        throw new AssertionError("expected a successful claim, got " + outcome);
    }

    static Fingerprint randomFingerprint() {
        return new Fingerprint("sha256-jcs", UUID.randomUUID().toString().replace("-", ""));
    }

    static StoredResponse response(int status, String body) {
        return new StoredResponse(
                status, Map.of("content-type", List.of("application/json")), body.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        pool.close();
    }
}
