package dev.exactly.idempotency.client.intent;

import dev.exactly.idempotency.client.IdempotentRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A journal in a database table ({@value #TABLE}, PostgreSQL), for services that already keep their
 * state there: several instances then share it, and any of them can resume an intent. The schema ships as
 * {@value #SCHEMA_RESOURCE}; {@link #createTable} runs it. Every method is one autocommit statement (two
 * for {@link #putIfAbsent}: an {@code INSERT … ON CONFLICT DO NOTHING}, committed, then the read of the
 * row that won), so an entry is durable when the method returns.
 */
public final class JdbcKeyJournal implements KeyJournal {
    /** The table, resolved through the connection's {@code search_path}. */
    public static final String TABLE = "idempotency_client_journal";
    /** The class-path resource of the table's schema. */
    public static final String SCHEMA_RESOURCE = "db/idempotency-client/V1__idempotency_client_journal.sql";

    /** Writes the entry unless the intent has one. */
    private static final String INSERT = """
            INSERT INTO idempotency_client_journal
                (namespace, intent_id, idempotency_key, method, targets, headers, body, created_at, finished_at, final_status)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (namespace, intent_id) DO NOTHING
            """;

    private static final String FIND = """
            SELECT namespace, intent_id, idempotency_key, method, targets, headers, body, created_at, finished_at, final_status
            FROM idempotency_client_journal
            WHERE namespace = ? AND intent_id = ?
            """;
    private static final String FINISH = """
            UPDATE idempotency_client_journal SET finished_at = ?, final_status = ?
            WHERE namespace = ? AND intent_id = ? AND idempotency_key = ?
            """;
    private static final String PENDING = """
            SELECT namespace, intent_id, idempotency_key, method, targets, headers, body, created_at, finished_at, final_status
            FROM idempotency_client_journal
            WHERE finished_at IS NULL
            ORDER BY created_at, namespace, intent_id
            """;
    private static final String REMOVE_FINISHED = """
            DELETE FROM idempotency_client_journal WHERE finished_at < ?
            """;

    private final DataSource dataSource;
    private final int timeoutSeconds;

    private JdbcKeyJournal(DataSource dataSource, Duration statementTimeout) {
        this.dataSource = dataSource;
        this.timeoutSeconds = Math.toIntExact(Math.max(1, statementTimeout.toSeconds()));
    }

    /** A journal on {@code dataSource}'s table, statements bounded by 5 s. */
    public static JdbcKeyJournal create(DataSource dataSource) {
        return create(dataSource, Duration.ofSeconds(5));
    }

    /** A journal on {@code dataSource}'s table, each statement bounded by {@code statementTimeout} (whole seconds). */
    public static JdbcKeyJournal create(DataSource dataSource, Duration statementTimeout) {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(statementTimeout, "statementTimeout");
        if (statementTimeout.toSeconds() < 1) {
            throw new IllegalArgumentException("statementTimeout is at least 1 s (JDBC counts whole seconds)");
        }
        return new JdbcKeyJournal(dataSource, statementTimeout);
    }

    /** The schema script ({@value #SCHEMA_RESOURCE}). */
    public static String schema() {
        try (InputStream in = JdbcKeyJournal.class.getResourceAsStream("/" + SCHEMA_RESOURCE)) {
            Objects.requireNonNull(in, SCHEMA_RESOURCE + " is missing from the class path");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + SCHEMA_RESOURCE, e);
        }
    }

    /** Creates the table and its indexes if missing (the schema is idempotent). */
    public static void createTable(DataSource dataSource) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute(schema());
        } catch (SQLException e) {
            throw new KeyJournalException("cannot create " + TABLE + ": " + e.getMessage(), e);
        }
    }

    @Override
    public JournalEntry putIfAbsent(JournalEntry candidate) {
        Objects.requireNonNull(candidate, "candidate");
        return run("write the entry of " + candidate.intent(), c -> {
            try (PreparedStatement s = prepare(c, INSERT)) {
                IdempotentRequest r = candidate.request();
                s.setString(1, candidate.intent().namespace());
                s.setString(2, candidate.intent().id());
                s.setString(3, candidate.key());
                s.setString(4, r.method());
                s.setString(5, lines(r.targets().stream().map(URI::toString).toList()));
                s.setString(6, headerLines(r.headers()));
                s.setBytes(7, r.body());
                s.setObject(8, time(candidate.createdAt()));
                s.setObject(9, candidate.finishedAt() == null ? null : time(candidate.finishedAt()));
                if (candidate.finished()) {
                    s.setInt(10, candidate.finalStatus());
                } else {
                    s.setNull(10, java.sql.Types.INTEGER);
                }
                s.executeUpdate();
            }
            return find(c, candidate.intent())
                    .orElseThrow(() -> new KeyJournalException(
                            "the entry of " + candidate.intent() + " vanished right after it was written"));
        });
    }

    @Override
    public Optional<JournalEntry> find(IntentId intent) {
        Objects.requireNonNull(intent, "intent");
        return run("read the entry of " + intent, c -> find(c, intent));
    }

    @Override
    public boolean finish(IntentId intent, String key, int status, Instant at) {
        return run("finish the entry of " + intent, c -> {
            try (PreparedStatement s = prepare(c, FINISH)) {
                s.setObject(1, time(at));
                s.setInt(2, status);
                s.setString(3, intent.namespace());
                s.setString(4, intent.id());
                s.setString(5, key);
                return s.executeUpdate() > 0;
            }
        });
    }

    @Override
    public List<JournalEntry> pending() {
        return run("list pending entries", c -> {
            try (PreparedStatement s = prepare(c, PENDING);
                    ResultSet rows = s.executeQuery()) {
                List<JournalEntry> out = new ArrayList<>();
                while (rows.next()) {
                    out.add(entry(rows));
                }
                return out;
            }
        });
    }

    @Override
    public int removeFinishedBefore(Instant cutoff) {
        return run("remove finished entries", c -> {
            try (PreparedStatement s = prepare(c, REMOVE_FINISHED)) {
                s.setObject(1, time(cutoff));
                return s.executeUpdate();
            }
        });
    }

    private Optional<JournalEntry> find(Connection c, IntentId intent) throws SQLException {
        try (PreparedStatement s = prepare(c, FIND)) {
            s.setString(1, intent.namespace());
            s.setString(2, intent.id());
            try (ResultSet rows = s.executeQuery()) {
                return rows.next() ? Optional.of(entry(rows)) : Optional.empty();
            }
        }
    }

    private static JournalEntry entry(ResultSet row) throws SQLException {
        IntentId intent = new IntentId(row.getString("namespace"), row.getString("intent_id"));
        try {
            List<String> targets = split(row.getString("targets"));
            IdempotentRequest.Builder request =
                    IdempotentRequest.builder(row.getString("method"), URI.create(targets.getFirst()));
            for (String target : targets.subList(1, targets.size())) {
                request.alsoTo(URI.create(target));
            }
            for (String line : split(row.getString("headers"))) {
                int colon = line.indexOf(':');
                request.header(line.substring(0, colon), line.substring(colon + 2));
            }
            request.body(row.getBytes("body"));
            OffsetDateTime finished = row.getObject("finished_at", OffsetDateTime.class);
            int status = row.getInt("final_status");
            return new JournalEntry(
                    intent,
                    row.getString("idempotency_key"),
                    request.build(),
                    row.getObject("created_at", OffsetDateTime.class).toInstant(),
                    finished == null ? null : finished.toInstant(),
                    finished == null ? 0 : status);
        } catch (RuntimeException e) {
            throw new KeyJournalException(
                    "the journal row of " + intent + " cannot be read (" + e.getMessage()
                            + "); it is kept, and no new key is minted for its intent",
                    e);
        }
    }

    private static String lines(List<String> values) {
        return String.join("\n", values);
    }

    private static String headerLines(Map<String, List<String>> headers) {
        List<String> out = new ArrayList<>();
        headers.forEach((name, values) -> values.forEach(v -> out.add(name + ": " + v)));
        return lines(out);
    }

    private static List<String> split(String text) {
        return text.isEmpty() ? List.of() : List.of(text.split("\n", -1));
    }

    private static OffsetDateTime time(@Nullable Instant at) {
        return Objects.requireNonNull(at, "time").atOffset(ZoneOffset.UTC);
    }

    private PreparedStatement prepare(Connection c, String sql) throws SQLException {
        PreparedStatement s = c.prepareStatement(sql);
        s.setQueryTimeout(timeoutSeconds);
        return s;
    }

    @FunctionalInterface
    private interface SqlAction<T> {
        T run(Connection c) throws SQLException;
    }

    private <T> T run(String what, SqlAction<T> action) {
        try (Connection c = dataSource.getConnection()) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            int before = bound(c);
            try {
                return action.run(c);
            } finally {
                unbound(c, before);
            }
        } catch (SQLException e) {
            throw new KeyJournalException("key journal: cannot " + what + ": " + e.getMessage(), e);
        }
    }

    /**
     * Bounds every wait for the database's answer on {@code c} at twice the statement timeout: a server that
     * answers not even the query timeout's cancel (frozen, or behind a network that drops packets) fails the
     * call there, with its connection, instead of holding the caller until the operating system gives up on
     * it. Returns the bound the connection had, or -1 when its driver has none.
     */
    private int bound(Connection c) throws SQLException {
        try {
            int before = c.getNetworkTimeout();
            c.setNetworkTimeout(Runnable::run, Math.toIntExact(2_000L * timeoutSeconds));
            return before;
        } catch (SQLFeatureNotSupportedException e) {
            return -1; // the query timeout alone, then
        }
    }

    private static void unbound(Connection c, int before) {
        if (before < 0) {
            return;
        }
        try {
            if (!c.isClosed()) {
                c.setNetworkTimeout(Runnable::run, before);
            }
        } catch (SQLException e) {
            // broken by the bound itself: the pool drops it
        }
    }
}
