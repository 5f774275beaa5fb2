package dev.exactly.payments.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Group commit on a real PostgreSQL: callers that wait while a transaction runs share the next one, and one
 * caller's failure commits nothing of the others and sends each back to run alone. The first transaction is
 * held on an advisory lock the test owns, so that the others are known to be waiting when it ends.
 */
class CommitBatcherTest {
    private static final long HOLD = 7_331;

    private DataSource dataSource;
    private Jdbc jdbc;
    private Connection holder;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    @BeforeEach
    void schema() throws SQLException {
        dataSource = TestPostgres.freshSchema("batch");
        jdbc = new Jdbc(dataSource);
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE item (id text PRIMARY KEY, n bigint GENERATED ALWAYS AS IDENTITY)");
        }
        holder = dataSource.getConnection();
    }

    @AfterEach
    void close() throws SQLException {
        threads.shutdownNow();
        holder.close();
    }

    private static Pipeline insert(String id) {
        Pipeline p = new Pipeline();
        p.add(
                "INSERT INTO item (id) VALUES (?)",
                (s, first) -> {
                    s.setString(first, id);
                    return first + 1;
                },
                s -> s.getUpdateCount() == 1);
        return p;
    }

    /** A pipeline that inserts {@code id}, then waits for the test's advisory lock {@code lock}. */
    private static Pipeline heldInsert(String id, long lock) {
        Pipeline p = insert(id);
        p.add("SELECT pg_advisory_xact_lock(" + lock + ")", (s, first) -> first, s -> Boolean.TRUE);
        return p;
    }

    private void hold() throws SQLException {
        try (Statement s = holder.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + HOLD + ")");
        }
    }

    private void release() throws SQLException {
        try (Statement s = holder.createStatement()) {
            s.execute("SELECT pg_advisory_unlock(" + HOLD + ")");
        }
    }

    /** Starts the held first transaction and waits until its statement waits for the lock. */
    private Future<Boolean> firstHeld(CommitBatcher batcher) throws SQLException {
        hold();
        Future<Boolean> first = threads.submit(() -> batcher.commit(heldInsert("first", HOLD), "first"));
        await().atMost(Duration.ofSeconds(20))
                .until(() -> jdbc.queryOne(
                                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock("
                                                + HOLD + ")%'",
                                        s -> {},
                                        r -> r.getLong(1))
                                .orElse(0L)
                        == 1L);
        return first;
    }

    private List<Future<Boolean>> queue(CommitBatcher batcher, List<Pipeline> pipelines, List<String> orders) {
        List<Future<Boolean>> calls = new ArrayList<>();
        for (int i = 0; i < pipelines.size(); i++) {
            Pipeline p = pipelines.get(i);
            String order = orders.get(i);
            calls.add(threads.submit(() -> batcher.commit(p, order)));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> batcher.waiting() == pipelines.size());
        return calls;
    }

    private long count(String sql) {
        return jdbc.queryOne(sql, s -> {}, r -> r.getLong(1)).orElseThrow();
    }

    @Test
    void callersWaitingWhileATransactionRunsShareTheNextOneInTheOrderOfTheirKeys() throws Exception {
        CommitBatcher batcher = new CommitBatcher(jdbc, 64, 1);
        Future<Boolean> first = firstHeld(batcher);
        List<Pipeline> pipelines = new ArrayList<>();
        List<String> orders = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            String id = String.format("item-%02d", 29 - i);
            pipelines.add(insert(id));
            orders.add(id);
        }
        List<Future<Boolean>> calls = queue(batcher, pipelines, orders);
        release();

        assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
        for (Future<Boolean> call : calls) {
            assertThat(call.get(20, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(count("SELECT count(*) FROM item")).isEqualTo(31);
        // two transactions: the held one, then every caller that waited for it
        assertThat(count("SELECT count(DISTINCT xmin::text) FROM item")).isEqualTo(2);
        assertThat(count("SELECT count(DISTINCT xmin::text) FROM item WHERE id LIKE 'item-%'"))
                .isEqualTo(1);
        // within the batch, the inserts ran in the order of their keys, whatever the order of arrival
        assertThat(jdbc.query("SELECT id FROM item WHERE id LIKE 'item-%' ORDER BY n", s -> {}, r -> r.getString(1)))
                .isSorted()
                .hasSize(30);
        assertThat(batcher.waiting()).isZero();
    }

    @Test
    void noMoreThanMaxPartsShareATransaction() throws Exception {
        CommitBatcher batcher = new CommitBatcher(jdbc, 4, 1);
        Future<Boolean> first = firstHeld(batcher);
        List<Pipeline> pipelines = new ArrayList<>();
        List<String> orders = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            pipelines.add(insert("item-" + i));
            orders.add("item-" + i);
        }
        List<Future<Boolean>> calls = queue(batcher, pipelines, orders);
        release();
        assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
        for (Future<Boolean> call : calls) {
            assertThat(call.get(20, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(jdbc.query(
                        "SELECT count(*) FROM item WHERE id LIKE 'item-%' GROUP BY xmin::text ORDER BY 1",
                        s -> {}, r -> r.getLong(1)))
                .containsExactly(2L, 4L, 4L);
    }

    @Test
    void withASecondSlotACallerArrivingWhileATransactionIsHeldCommitsBesideIt() throws Exception {
        CommitBatcher batcher = new CommitBatcher(jdbc, 64, 2);
        Future<Boolean> first = firstHeld(batcher);
        assertThat(batcher.commit(insert("beside"), "beside")).isTrue();
        assertThat(first).isNotDone();
        release();
        assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(count("SELECT count(DISTINCT xmin::text) FROM item")).isEqualTo(2);
    }

    @Test
    void aSecondTransactionStartsBesideAHeldOneOnlyAfterOverlapAfterWithEveryCallerThatArrivedMeanwhile()
            throws Exception {
        Duration overlap = Duration.ofSeconds(3);
        CommitBatcher batcher = new CommitBatcher(jdbc, 64, 2, overlap);
        long before = System.nanoTime();
        Future<Boolean> first = firstHeld(batcher);
        List<Future<Boolean>> calls = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String id = "item-" + i;
            calls.add(threads.submit(() -> batcher.commit(insert(id), id)));
        }
        for (Future<Boolean> call : calls) {
            assertThat(call.get(20, TimeUnit.SECONDS)).isTrue();
        }
        // not before the held transaction had run that long, and then beside it, all in one
        assertThat(Duration.ofNanos(System.nanoTime() - before)).isGreaterThanOrEqualTo(overlap);
        assertThat(first).isNotDone();
        assertThat(count("SELECT count(DISTINCT xmin::text) FROM item WHERE id LIKE 'item-%'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM item WHERE id LIKE 'item-%'")).isEqualTo(5);
        release();
        assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(batcher.waiting()).isZero();
    }

    @Test
    void aFullBatchStartsBesideAHeldOneWithoutWaitingForOverlapAfter() throws Exception {
        CommitBatcher batcher = new CommitBatcher(jdbc, 4, 2, Duration.ofMinutes(10));
        Future<Boolean> first = firstHeld(batcher);
        List<Pipeline> pipelines = new ArrayList<>();
        List<String> orders = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            pipelines.add(insert("item-" + i));
            orders.add("item-" + i);
        }
        // three of four: they wait for the held transaction (or for ten minutes of it)
        List<Future<Boolean>> calls = new ArrayList<>(queue(batcher, pipelines, orders));
        assertThat(calls).noneMatch(Future::isDone);

        // the fourth fills a batch: it starts beside the held one at once, all four in it
        calls.add(threads.submit(() -> batcher.commit(insert("item-3"), "item-3")));
        for (Future<Boolean> call : calls) {
            assertThat(call.get(20, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(first).isNotDone();
        assertThat(count("SELECT count(DISTINCT xmin::text) FROM item WHERE id LIKE 'item-%'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM item WHERE id LIKE 'item-%'")).isEqualTo(4);
        release();
        assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(batcher.waiting()).isZero();
    }

    @Test
    void overlapAfterMustNotBeNegative() {
        assertThatThrownBy(() -> new CommitBatcher(jdbc, 4, 2, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aFailureInABatchCommitsNothingOfItAndSendsEveryCallerToRunAlone() throws Exception {
        jdbc.inTransaction(c -> Jdbc.update(c, "INSERT INTO item (id) VALUES ('taken')", s -> {}));
        CommitBatcher batcher = new CommitBatcher(jdbc, 64, 1);
        Future<Boolean> first = firstHeld(batcher);
        List<Future<Boolean>> calls =
                queue(batcher, List.of(insert("a"), insert("taken"), insert("c")), List.of("a", "b", "c"));
        release();

        assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
        for (Future<Boolean> call : calls) {
            assertThat(call.get(20, TimeUnit.SECONDS)).as("told to run alone").isFalse();
        }
        assertThat(count("SELECT count(*) FROM item WHERE id IN ('a', 'c')")).isZero();
        // alone, each meets its own fate: the others commit, the duplicate fails with its own error
        assertThat(new CommitBatcher(jdbc, 64, 1).commit(insert("a"), "a")).isTrue();
        assertThat(new CommitBatcher(jdbc, 64, 1).commit(insert("c"), "c")).isTrue();
        assertThatThrownBy(() -> new CommitBatcher(jdbc, 64, 1).commit(insert("taken"), "b"))
                .isInstanceOf(DatabaseException.class)
                .satisfies(e ->
                        assertThat(((DatabaseException) e).isUniqueViolation()).isTrue());
        assertThat(count("SELECT count(*) FROM item")).isEqualTo(4);
    }

    @Test
    void aReaderThatThrowsAfterTheCommitFailsItsOwnCallerOnly() throws Exception {
        CommitBatcher batcher = new CommitBatcher(jdbc, 64, 1);
        Future<Boolean> first = firstHeld(batcher);
        Pipeline failing = new Pipeline();
        failing.add("INSERT INTO item (id) VALUES ('b')", (s, f) -> f, s -> {
            throw new IllegalStateException("the reader of b refused");
        });
        List<Future<Boolean>> calls =
                queue(batcher, List.of(insert("a"), failing, insert("c")), List.of("a", "b", "c"));
        release();

        assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(calls.get(0).get(20, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> calls.get(1).get(20, TimeUnit.SECONDS))
                .hasCauseInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the reader of b refused");
        assertThat(calls.get(2).get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(count("SELECT count(*) FROM item WHERE id IN ('a', 'b', 'c')"))
                .isEqualTo(3);
    }

    @Test
    void aResultThatCannotBeReadAfterTheCommitIsItsOwnCallersFailureNotTheBatchs() throws Exception {
        CommitBatcher batcher = new CommitBatcher(jdbc, 64, 1);
        Future<Boolean> first = firstHeld(batcher);
        Pipeline unreadable = new Pipeline();
        unreadable.add("INSERT INTO item (id) VALUES ('b')", (s, f) -> f, s -> {
            throw new SQLException("the result of b cannot be read", "XX000");
        });
        List<Future<Boolean>> calls =
                queue(batcher, List.of(insert("a"), unreadable, insert("c")), List.of("a", "b", "c"));
        release();

        assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(calls.get(0).get(20, TimeUnit.SECONDS)).isTrue();
        // not "run alone": the batch committed, b with it
        assertThatThrownBy(() -> calls.get(1).get(20, TimeUnit.SECONDS))
                .cause()
                .isInstanceOf(DatabaseException.class)
                .hasMessageContaining("the result of b cannot be read");
        assertThat(calls.get(2).get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(count("SELECT count(*) FROM item WHERE id IN ('a', 'b', 'c')"))
                .isEqualTo(3);
    }

    @Test
    void aConnectionLostInABatchIsEveryCallersFailureAndNoneIsToldToRunAgain() throws Exception {
        CommitBatcher batcher = new CommitBatcher(jdbc, 64, 1);
        try (Statement s = holder.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + (HOLD + 1) + ")");
        }
        Future<Boolean> first = firstHeld(batcher);
        List<Future<Boolean>> calls =
                queue(batcher, List.of(heldInsert("a", HOLD + 1), heldInsert("b", HOLD + 1)), List.of("a", "b"));
        release();
        assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
        // the batch of two now waits for the second lock: its backend goes away, as a crashed server's would
        await().atMost(Duration.ofSeconds(20))
                .until(() -> count(
                                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                        + " AND query LIKE '%pg_advisory_xact_lock(" + (HOLD + 1) + ")%'")
                        == 1);
        for (Future<Boolean> call : calls) {
            assertThatThrownBy(() -> call.get(20, TimeUnit.SECONDS))
                    .cause()
                    .isInstanceOf(DatabaseException.class)
                    .satisfies(e ->
                            assertThat(((DatabaseException) e).rolledBack()).isFalse());
        }
        assertThat(count("SELECT count(*) FROM item WHERE id IN ('a', 'b')")).isZero();
    }
}
