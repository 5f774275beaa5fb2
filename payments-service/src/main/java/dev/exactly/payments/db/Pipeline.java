package dev.exactly.payments.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Statements sent to PostgreSQL together, in one round trip: their texts joined into one prepared
 * statement, which pgjdbc sends as one message per statement followed by a single Sync. The server runs
 * them one after the other in the caller's transaction (each sees what the ones before it wrote), and
 * all their results come back at once. A statement that fails aborts the transaction and the server skips
 * the rest: nothing of the pipeline commits. Each step reads its own result, in order, once the pipeline
 * ran; a step may decide from it that the caller must roll back.
 *
 * <pre>{@code
 * Pipeline p = new Pipeline();
 * Pipeline.Result<Boolean> fenced = p.add(sql, (s, first) -> { s.setString(first, key); return first + 1; },
 *         s -> s.getUpdateCount() == 1);
 * p.run(connection);
 * if (!fenced.get()) { roll back }
 * }</pre>
 *
 * Not thread-safe; one use.
 */
public final class Pipeline {

    /** Binds a step's parameters from index {@code first} on; returns the index after its last. */
    @FunctionalInterface
    public interface Binder {
        int bind(PreparedStatement statement, int first) throws SQLException;
    }

    /** Reads a step's result, the statement positioned on it ({@link Statement#getResultSet()} or the update count). */
    @FunctionalInterface
    public interface Reader<T extends @Nullable Object> {
        T read(Statement statement) throws SQLException;
    }

    /** What a step read, available once the pipeline ran. */
    public static final class Result<T extends @Nullable Object> {
        private final Reader<T> reader;
        private @Nullable T value;
        private boolean read;

        private Result(Reader<T> reader) {
            this.reader = reader;
        }

        @SuppressWarnings("NullAway") // once read, value is what the reader returned, null only where T admits it
        public T get() {
            if (!read) {
                throw new IllegalStateException("the pipeline has not run");
            }
            return value;
        }

        private void read(Statement statement) throws SQLException {
            value = reader.read(statement);
            read = true;
        }
    }

    private record Step(String sql, Binder binder, Result<?> result) {}

    private final List<Step> steps = new ArrayList<>(4);

    /**
     * Adds a statement (one, without a trailing semicolon).
     *
     * @return where its result is found after {@link #run}
     */
    public <T extends @Nullable Object> Result<T> add(String sql, Binder binder, Reader<T> reader) {
        Result<T> result = new Result<>(Objects.requireNonNull(reader, "reader"));
        steps.add(new Step(Objects.requireNonNull(sql, "sql"), Objects.requireNonNull(binder, "binder"), result));
        return result;
    }

    /**
     * Ends the pipeline with {@code COMMIT}: the transaction commits in the same round trip, if every
     * statement before succeeded (after a failure the server skips it, and the transaction stays aborted:
     * roll back). Use it only when nothing read from the results can still call for a rollback. The
     * connection is then outside a transaction, and its {@link Connection#commit()} sends nothing.
     */
    public void commit() {
        add("COMMIT", (s, first) -> first, s -> Boolean.TRUE);
    }

    /**
     * Sends the statements of several pipelines in one round trip on {@code connection}, one after the
     * other in the order given, then {@code COMMIT}, and reads each part's results. A statement that fails
     * aborts the transaction for all of them ({@link DatabaseException}: roll back). A reader that throws
     * once everything ran (and committed) fails its part only: its exception ({@link DatabaseException} for
     * an {@link SQLException}) is returned at the part's index, and the other parts are read all the same.
     *
     * @return per part, what its readers threw, or {@code null}
     */
    static List<@Nullable RuntimeException> runCommitting(Connection connection, List<Pipeline> parts) {
        Pipeline all = new Pipeline();
        for (Pipeline part : parts) {
            all.steps.addAll(part.steps);
        }
        all.commit();
        List<@Nullable RuntimeException> failures = new ArrayList<>(parts.size());
        try (PreparedStatement statement = all.prepare(connection)) {
            statement.execute();
            boolean first = true;
            for (Pipeline part : parts) {
                RuntimeException failure = null;
                for (Step step : part.steps) {
                    if (!first) {
                        statement.getMoreResults();
                    }
                    first = false;
                    if (failure == null) {
                        try {
                            step.result().read(statement);
                        } catch (RuntimeException e) {
                            failure = e;
                        } catch (SQLException e) {
                            // everything ran and committed: a result that cannot be read is its part's alone
                            failure = new DatabaseException(e);
                        }
                    }
                }
                failures.add(failure);
            }
        } catch (SQLException e) {
            throw new DatabaseException(e);
        }
        return failures;
    }

    /**
     * Sends every statement in one round trip on {@code connection} and reads their results in order.
     * Commits nothing: the caller's transaction decides.
     *
     * @throws DatabaseException a statement failed (the transaction is aborted: roll back)
     */
    public void run(Connection connection) {
        if (steps.isEmpty()) {
            throw new IllegalStateException("an empty pipeline");
        }
        try (PreparedStatement statement = prepare(connection)) {
            statement.execute();
            for (int i = 0; i < steps.size(); i++) {
                if (i > 0) {
                    statement.getMoreResults();
                }
                steps.get(i).result().read(statement);
            }
        } catch (SQLException e) {
            throw new DatabaseException(e);
        }
    }

    /** The steps' texts joined into one statement, their parameters bound. */
    private PreparedStatement prepare(Connection connection) throws SQLException {
        StringBuilder sql = new StringBuilder(512 * steps.size());
        for (Step step : steps) {
            if (!sql.isEmpty()) {
                sql.append(";\n");
            }
            sql.append(step.sql().strip());
        }
        PreparedStatement statement = connection.prepareStatement(sql.toString());
        try {
            int next = 1;
            for (Step step : steps) {
                next = step.binder().bind(statement, next);
            }
            return statement;
        } catch (SQLException | RuntimeException e) {
            statement.close();
            throw e;
        }
    }
}
