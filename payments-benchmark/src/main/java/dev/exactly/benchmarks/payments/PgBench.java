package dev.exactly.benchmarks.payments;

import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The physical reference: PostgreSQL's own benchmark client, {@code pgbench}, committing single-row
 * {@code INSERT ... ON CONFLICT DO NOTHING} transactions (a random key each, so every one writes and
 * commits: one WAL flush per commit, as a charge's transactions need) on the same server. A charge can never be cheaper than the commits it makes, so this
 * rate bounds the service from above.
 */
final class PgBench {
    private static final Pattern TPS = Pattern.compile("tps = ([0-9.]+) \\(without initial connection time\\)");

    private final Path binary;
    private final String jdbcUrl;
    private final String schema;
    private final Path script;

    private PgBench(Path binary, String jdbcUrl, String schema, Path script) {
        this.binary = binary;
        this.jdbcUrl = jdbcUrl;
        this.schema = schema;
        this.script = script;
    }

    /**
     * {@code pgbench}, if any: the newest in Debian's server package directories (the binary itself), else one on
     * the PATH (on Debian, {@code /usr/bin/pgbench} is a wrapper that runs the server package's).
     */
    static Optional<Path> installed() {
        try (var versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            Optional<Path> packaged = versions.map(v -> v.resolve("bin/pgbench"))
                    .filter(Files::isExecutable)
                    .max(Path::compareTo);
            if (packaged.isPresent()) {
                return packaged;
            }
        } catch (IOException e) {
            // no such directory: not Debian's layout
        }
        return Tools.onPath("pgbench");
    }

    /** Creates the table in {@code schema} (a schema of the run) and writes the script into {@code workDir}. */
    static PgBench create(String jdbcUrl, String schema, Path workDir) throws IOException, SQLException {
        Path binary = installed()
                .orElseThrow(() -> new IllegalStateException(
                        "no pgbench: install it (Debian ships it with the server package, apt-get install -y postgresql-15), "
                                + "or set -Dexactly.bench.pgbench=0 to run without the reference"));
        try (Connection c = DriverManager.getConnection(jdbcUrl);
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + schema + ".pgbench_commit (k bigint PRIMARY KEY)");
        }
        Path script = workDir.resolve("pgbench-commit.sql");
        Files.writeString(script, """
                \\set k random(1, 4000000000)
                INSERT INTO %s.pgbench_commit (k) VALUES (:k) ON CONFLICT (k) DO NOTHING;
                """.formatted(schema));
        return new PgBench(binary, jdbcUrl, schema, script);
    }

    /** Commits per second over {@code duration} with {@code connections} clients on {@code threads} threads. */
    double run(int threads, int connections, Duration duration) throws IOException, InterruptedException {
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        List<String> command = new ArrayList<>(List.of(
                binary.toString(),
                "-n",
                "-M",
                "prepared",
                "-c",
                Integer.toString(connections),
                "-j",
                Integer.toString(threads),
                "-T",
                Long.toString(duration.toSeconds()),
                "-f",
                script.toString(),
                "-h",
                uri.getHost(),
                "-p",
                Integer.toString(uri.getPort() > 0 ? uri.getPort() : 5432)));
        String user = parameter(uri, "user");
        if (user != null) {
            command.add("-U");
            command.add(user);
        }
        command.add(uri.getPath().substring(1));
        String password = parameter(uri, "password");
        String text = Tools.run(
                command, password == null ? Map.of() : Map.of("PGPASSWORD", password), duration.plusSeconds(60));
        Matcher tps = TPS.matcher(text);
        if (!tps.find()) {
            throw new IllegalStateException("pgbench printed no rate: " + text);
        }
        return Double.parseDouble(tps.group(1));
    }

    /** The schema its table is in. */
    String schema() {
        return schema;
    }

    private static @Nullable String parameter(URI uri, String name) {
        String query = uri.getRawQuery();
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&", -1)) {
            if (pair.startsWith(name + "=")) {
                return URLDecoder.decode(pair.substring(name.length() + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }
}
