package dev.exactly.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL server of a test's own (embedded binaries from a Maven artifact) on a free loopback port,
 * with fsync and synchronous commit on, that the test may crash and bring back: {@code pg_ctl stop -m
 * immediate} quits the postmaster and every backend at once without a checkpoint (open transactions are
 * lost, connections break), and the next start recovers from the WAL on the same data directory and port.
 */
public final class OwnPostgres implements AutoCloseable {
    private final Path dataDir;
    private final int port;
    private final EmbeddedPostgres postgres;
    /** The server's own options (port, settings), as {@code postmaster.opts} recorded them at the first start. */
    private final List<String> serverOptions;

    private int restarts;

    private OwnPostgres(Path dataDir, Map<String, String> settings) {
        this.dataDir = dataDir;
        this.port = TestRedis.freePort();
        try {
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
                    .setDataDirectory(dataDir)
                    .setCleanDataDirectory(true)
                    .setPort(port)
                    .setServerConfig("max_connections", "200")
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on");
            settings.forEach(builder::setServerConfig);
            this.postgres = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start an embedded PostgreSQL", e);
        }
        this.serverOptions = recordedOptions();
    }

    /** Starts a server whose data lives in {@code dataDir} (emptied first). */
    public static OwnPostgres start(Path dataDir) {
        return new OwnPostgres(dataDir, Map.of());
    }

    /** As {@link #start(Path)}, with server settings ({@code fsync}, say) in place of its own. */
    public static OwnPostgres start(Path dataDir, Map<String, String> settings) {
        return new OwnPostgres(dataDir, settings);
    }

    public int port() {
        return port;
    }

    /** {@code jdbc:postgresql://127.0.0.1:PORT/postgres?user=postgres}. */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
    }

    /** Plain connections (no pool) that give up connecting after 3 s. */
    public DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl());
        ds.setConnectTimeout(3);
        return ds;
    }

    /** The postmaster's PID (first line of {@code postmaster.pid}). */
    public long postmasterPid() {
        try {
            return Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid"))
                    .getFirst()
                    .strip());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code SIGSTOP} to the postmaster and every process it started: the server stops answering, as a
     * frozen machine or a network that drops packets would have it, while every socket stays open and
     * connects still complete (the kernel accepts them). {@link #thaw()} undoes it.
     */
    public void freeze() {
        long postmaster = postmasterPid();
        Signals.stop(postmaster);
        ProcessHandle.of(postmaster).ifPresent(p -> p.descendants().forEach(child -> Signals.stop(child.pid())));
    }

    /** {@code SIGCONT} to every process of a frozen server: what its backends had read runs on. */
    public void thaw() {
        long postmaster = postmasterPid();
        ProcessHandle.of(postmaster).ifPresent(p -> p.descendants().forEach(child -> Signals.resume(child.pid())));
        Signals.resume(postmaster);
    }

    /** How many times the server was crashed and brought back. */
    public int restarts() {
        return restarts;
    }

    /** {@code pg_ctl restart -m immediate}: a crash and a recovery from the WAL. */
    public void restartImmediate() {
        pgCtl(List.of("-D", dataDir.toString(), "-m", "immediate", "-w", "-t", "60", "restart"));
        restarts++;
    }

    /** {@code pg_ctl stop -m immediate}: a crash; the server stays down until {@link #startAgain()}. */
    public void stopImmediate() {
        pgCtl(List.of("-D", dataDir.toString(), "-m", "immediate", "-w", "-t", "60", "stop"));
    }

    /**
     * Starts the stopped server again with its first start's options (recovering from its WAL) and waits
     * until it accepts connections.
     */
    public void startAgain() {
        Path log = dataDir.resolveSibling(dataDir.getFileName() + "-server.log");
        StringBuilder options = new StringBuilder();
        for (String option : serverOptions) {
            options.append(options.isEmpty() ? "" : " ")
                    .append('\'')
                    .append(option.replace("'", "'\\''"))
                    .append('\'');
        }
        pgCtl(List.of(
                "-D", dataDir.toString(), "-l", log.toString(), "-o", options.toString(), "-w", "-t", "60", "start"));
        restarts++;
    }

    /** The options after the binary in {@code postmaster.opts}, {@code -D} and its directory left out. */
    private List<String> recordedOptions() {
        try {
            String opts = Files.readString(dataDir.resolve("postmaster.opts"), StandardCharsets.UTF_8)
                    .strip();
            List<String> tokens = new ArrayList<>();
            java.util.regex.Matcher quoted =
                    java.util.regex.Pattern.compile("\"([^\"]*)\"").matcher(opts);
            while (quoted.find()) {
                tokens.add(quoted.group(1));
            }
            List<String> options = new ArrayList<>();
            // the binary comes first, quoted or not: only a quoted one is among the tokens
            for (int i = opts.startsWith("\"") ? 1 : 0; i < tokens.size(); i++) {
                if (tokens.get(i).equals("-D")) {
                    i++;
                } else {
                    options.add(tokens.get(i));
                }
            }
            return List.copyOf(options);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs {@code pg_ctl} of the embedded binaries (under {@code unshare -U} as root, as the library does). */
    private void pgCtl(List<String> args) {
        List<String> command = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name")) && Files.isExecutable(Path.of("/usr/bin/unshare"))) {
            command.add("/usr/bin/unshare");
            command.add("-U");
        }
        command.add(pgCtlBinary().toString());
        command.addAll(args);
        Path log = dataDir.resolveSibling(dataDir.getFileName() + "-pg_ctl.log");
        try {
            // a started postmaster inherits this output: a file, never a pipe that someone must drain
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            if (!p.waitFor(90, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("pg_ctl " + args + " did not return; see " + log);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("pg_ctl " + args + " failed:\n" + tail(log));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** {@code pg_ctl} next to the {@code postgres} binary that {@code postmaster.opts} names. */
    private Path pgCtlBinary() {
        try {
            String opts = Files.readString(dataDir.resolve("postmaster.opts"), StandardCharsets.UTF_8)
                    .strip();
            String binary = opts.startsWith("\"") ? opts.substring(1, opts.indexOf('"', 1)) : opts.split("\\s+", -1)[0];
            Path pgCtl = Path.of(binary).resolveSibling("pg_ctl");
            if (!Files.isExecutable(pgCtl)) {
                throw new IllegalStateException("no pg_ctl next to " + binary);
            }
            return pgCtl;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String tail(Path log) {
        try {
            List<String> all = Files.readAllLines(log);
            return String.join("\n", all.subList(Math.max(0, all.size() - 20), all.size()));
        } catch (IOException e) {
            return "(cannot read " + log + ": " + e + ")";
        }
    }

    @Override
    public void close() {
        try {
            postgres.close();
        } catch (IOException e) {
            System.err.println("[exactly-tests] could not stop the embedded PostgreSQL: " + e);
        }
    }

    @Override
    public String toString() {
        return "own PostgreSQL on port " + port + " (" + dataDir + ")";
    }
}
