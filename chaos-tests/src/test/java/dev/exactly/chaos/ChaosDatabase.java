package dev.exactly.chaos;

import dev.exactly.testing.TestPostgres;
import dev.exactly.testing.TestRedis;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
            if (Boolean.getBoolean("exactly.chaos.keep")) {
                return;
            }
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(baseUrl);
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
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
        private final Path dataDir;
        private final int port;
        private final EmbeddedPostgres postgres;
        private int restarts;

        OwnServer(Path dataDir) {
            this.dataDir = dataDir;
            this.port = TestRedis.freePort();
            try {
                this.postgres = EmbeddedPostgres.builder()
                        .setDataDirectory(dataDir)
                        .setCleanDataDirectory(true)
                        .setPort(port)
                        .setServerConfig("max_connections", "200")
                        .setServerConfig("fsync", "on")
                        .setServerConfig("synchronous_commit", "on")
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException("could not start an embedded PostgreSQL", e);
            }
        }

        @Override
        String serviceUrl() {
            return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
        }

        @Override
        DataSource dataSource() {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(serviceUrl());
            ds.setConnectTimeout(3);
            return ds;
        }

        /** The postmaster's PID (first line of {@code postmaster.pid}). */
        long postmasterPid() {
            try {
                return Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).getFirst().strip());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        int restarts() {
            return restarts;
        }

        /**
         * {@code pg_ctl restart -m immediate}: the postmaster and every backend quit at once without a
         * checkpoint (open transactions are lost, connections break), then the server recovers from its WAL
         * on the same data directory and port.
         */
        void restartImmediate() {
            run(List.of("-D", dataDir.toString(), "-m", "immediate", "-w", "-t", "60", "restart"));
            restarts++;
        }

        /** Runs {@code pg_ctl} of the embedded binaries (under {@code unshare -U} as root, as the library does). */
        private void run(List<String> args) {
            List<String> command = new ArrayList<>();
            if ("root".equals(System.getProperty("user.name")) && Files.isExecutable(Path.of("/usr/bin/unshare"))) {
                command.add("/usr/bin/unshare");
                command.add("-U");
            }
            command.add(pgCtl().toString());
            command.addAll(args);
            Path log = dataDir.resolveSibling(dataDir.getFileName() + "-pg_ctl.log");
            try {
                // the restarted postmaster inherits this output: a file, never a pipe that someone must drain
                Process p = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
                if (!p.waitFor(90, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IllegalStateException("pg_ctl " + args + " did not return; see " + log);
                }
                if (p.exitValue() != 0) {
                    throw new IllegalStateException("pg_ctl " + args + " failed:\n" + Workspace.tail(log, 20));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }

        /** {@code pg_ctl} next to the {@code postgres} binary that {@code postmaster.opts} names. */
        private Path pgCtl() {
            try {
                String opts = Files.readString(dataDir.resolve("postmaster.opts"), StandardCharsets.UTF_8).strip();
                String binary = opts.startsWith("\"") ? opts.substring(1, opts.indexOf('"', 1)) : opts.split("\\s+")[0];
                Path pgCtl = Path.of(binary).resolveSibling("pg_ctl");
                if (!Files.isExecutable(pgCtl)) {
                    throw new IllegalStateException("no pg_ctl next to " + binary);
                }
                return pgCtl;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() {
            try {
                postgres.close();
            } catch (IOException e) {
                System.err.println("[chaos] could not stop the embedded PostgreSQL: " + e);
            }
        }

        @Override
        public String toString() {
            return "own PostgreSQL on port " + port + " (" + dataDir + ")";
        }
    }
}
