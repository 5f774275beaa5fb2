package dev.exactly.chaos;

import dev.exactly.testing.OwnPostgres;
import dev.exactly.testing.SystemProperties;
import dev.exactly.testing.TestPostgres;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The PostgreSQL database the services share: a fresh schema on the shared server, or a server of this
 * test's own (embedded binaries from a Maven artifact) that can be restarted in immediate mode, i.e.
 * crashed and recovered from its WAL, while the services run.
 */
abstract sealed class ChaosDatabase implements AutoCloseable {

    /** The services' {@code DATABASE_URL}. */
    abstract String serviceUrl();

    /** Plain connections (no pool) for the checker. */
    abstract DataSource dataSource();

    /** A fresh schema on the shared server ({@code 127.0.0.1:5432/test}, or the embedded fallback). */
    static ChaosDatabase sharedSchema(String prefix) {
        PGSimpleDataSource ds = (PGSimpleDataSource) TestPostgres.freshSchema(prefix);
        String schema = ds.getCurrentSchema();
        if (schema == null) {
            throw new IllegalStateException("a fresh schema has a name");
        }
        return new Shared(TestPostgres.jdbcUrl(), schema);
    }

    /** A server of its own on a free port, its data in {@code dir}. */
    static OwnServer ownServer(Path dir) {
        return new OwnServer(dir);
    }

    private static String withParameter(String url, String name, String value) {
        return url + (url.contains("?") ? "&" : "?") + name + "=" + value;
    }

    /** A schema on the shared server; dropped on close unless {@code exactly.chaos.keep=true}. */
    static final class Shared extends ChaosDatabase {
        private final String baseUrl;
        private final String schema;

        Shared(String baseUrl, String schema) {
            this.baseUrl = baseUrl;
            this.schema = schema;
        }

        @Override
        String serviceUrl() {
            return withParameter(baseUrl, "currentSchema", schema);
        }

        @Override
        DataSource dataSource() {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(baseUrl);
            ds.setCurrentSchema(schema);
            return ds;
        }

        @Override
        public void close() {
            if (SystemProperties.flag("exactly.chaos.keep")) {
                return;
            }
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(baseUrl);
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS \"" + schema.replace("\"", "") + "\" CASCADE");
            } catch (SQLException e) {
                System.err.println("[chaos] could not drop schema " + schema + ": " + e);
            }
        }

        @Override
        public String toString() {
            return "schema " + schema + " on " + baseUrl;
        }
    }

    /** An embedded PostgreSQL of this test's own, restartable in immediate mode. */
    static final class OwnServer extends ChaosDatabase {
        private final OwnPostgres postgres;

        OwnServer(Path dataDir) {
            this.postgres = OwnPostgres.start(dataDir);
        }

        @Override
        String serviceUrl() {
            return postgres.jdbcUrl();
        }

        @Override
        DataSource dataSource() {
            return postgres.dataSource();
        }

        /** The postmaster's PID (first line of {@code postmaster.pid}). */
        long postmasterPid() {
            return postgres.postmasterPid();
        }

        int restarts() {
            return postgres.restarts();
        }

        /**
         * {@code pg_ctl restart -m immediate}: the postmaster and every backend quit at once without a
         * checkpoint (open transactions are lost, connections break), then the server recovers from its WAL
         * on the same data directory and port.
         */
        void restartImmediate() {
            postgres.restartImmediate();
        }

        @Override
        public void close() {
            postgres.close();
        }

        @Override
        public String toString() {
            return postgres.toString();
        }
    }
}
