package dev.exactly.idempotency.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The sharing of statements among concurrent callers, with real threads and without a database. */
class CombinerTest {
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final CountDownLatch firstMayFinish = new CountDownLatch(1);
    private final AtomicInteger alone = new AtomicInteger();
    private final List<List<Integer>> batches = Collections.synchronizedList(new ArrayList<>());

    @AfterEach
    void stop() {
        firstMayFinish.countDown();
        threads.shutdownNow();
    }

    /** Alone: the item times ten, the first call held until {@link #firstMayFinish}. */
    private Integer runAlone(Integer item) {
        if (alone.getAndIncrement() == 0) {
            try {
                firstMayFinish.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
        return item * 10;
    }

    private Combiner<Integer, Integer> combiner(int lanes, int maxBatch, Combiner.Together<Integer, Integer> together) {
        return combiner(lanes, maxBatch, Long.MAX_VALUE, together);
    }

    /** Each item's size is its value. */
    private Combiner<Integer, Integer> combiner(
            int lanes, int maxBatch, long maxBatchSize, Combiner.Together<Integer, Integer> together) {
        return new Combiner<>(
                lanes,
                maxBatch,
                Integer::longValue,
                maxBatchSize,
                this::runAlone,
                together,
                e -> new IllegalStateException("unavailable: " + e.getSQLState(), e));
    }

    private List<Integer> timesTen(List<Integer> items) {
        batches.add(List.copyOf(items));
        return items.stream().map(i -> i * 10).toList();
    }

    /** Item 0 takes the only lane and is held; items 1..n queue behind it. */
    private List<Future<Integer>> queueBehindFirst(Combiner<Integer, Integer> combiner, int n) {
        List<Future<Integer>> results = new ArrayList<>();
        results.add(threads.submit(() -> combiner.submit(0)));
        await().atMost(10, TimeUnit.SECONDS).until(() -> alone.get() == 1);
        for (int i = 1; i <= n; i++) {
            int item = i;
            results.add(threads.submit(() -> combiner.submit(item)));
            await().atMost(10, TimeUnit.SECONDS).until(() -> combiner.queued() == item);
        }
        return results;
    }

    @Test
    void callersQueuedBehindABusyLaneShareOneStatementAndEachGetsItsOwnResult() throws Exception {
        Combiner<Integer, Integer> combiner = combiner(1, 32, this::timesTen);
        List<Future<Integer>> results = queueBehindFirst(combiner, 5);
        firstMayFinish.countDown();
        for (int i = 0; i < results.size(); i++) {
            assertThat(results.get(i).get(10, TimeUnit.SECONDS)).isEqualTo(i * 10);
        }
        assertThat(batches).containsExactly(List.of(1, 2, 3, 4, 5)); // in the order they queued
        assertThat(combiner.shared()).isEqualTo(5);
        assertThat(combiner.queued()).isZero();
        // the lane is free again: the next caller runs alone at once
        assertThat(threads.submit(() -> combiner.submit(7)).get(10, TimeUnit.SECONDS))
                .isEqualTo(70);
        assertThat(alone.get()).isEqualTo(2);
    }

    @Test
    void aSharedStatementCarriesAtMostMaxBatchWritesAndTheRestFollow() throws Exception {
        Combiner<Integer, Integer> combiner = combiner(1, 2, this::timesTen);
        List<Future<Integer>> results = queueBehindFirst(combiner, 5);
        firstMayFinish.countDown();
        for (int i = 0; i < results.size(); i++) {
            assertThat(results.get(i).get(10, TimeUnit.SECONDS)).isEqualTo(i * 10);
        }
        // two and two share; the last one left is alone in its lane
        assertThat(batches).containsExactly(List.of(1, 2), List.of(3, 4));
        assertThat(alone.get()).isEqualTo(2);
    }

    @Test
    void aSharedStatementTakesNoMoreWritesOnceTheirSizesReachTheBound() throws Exception {
        // sizes 1, 2, 3, 4, 5 against a bound of 6: [1, 2, 3], then [4] and [5] (each alone: 4 + 5 > 6)
        Combiner<Integer, Integer> combiner = combiner(1, 32, 6, this::timesTen);
        List<Future<Integer>> results = queueBehindFirst(combiner, 5);
        firstMayFinish.countDown();
        for (int i = 0; i < results.size(); i++) {
            assertThat(results.get(i).get(10, TimeUnit.SECONDS)).isEqualTo(i * 10);
        }
        assertThat(batches).containsExactly(List.of(1, 2, 3));
        assertThat(alone.get()).isEqualTo(3);
    }

    /**
     * A shared statement the server refused or ended while it is up: a deadlock, a serialization failure, one
     * caller's value refused (U+0000 in text), a statement timeout whose cancel it answered (the statement waited
     * for a row another transaction holds). Each caller runs its own write alone.
     */
    @ParameterizedTest
    @ValueSource(strings = {"40P01", "40001", "22021", "57014"})
    void aStatementTheServerRefusedOrEndedLetsEachCallerRunAlone(String sqlState) throws Exception {
        Combiner<Integer, Integer> combiner = combiner(1, 32, items -> {
            batches.add(List.copyOf(items));
            throw new SQLException("refused", sqlState);
        });
        List<Future<Integer>> results = queueBehindFirst(combiner, 4);
        firstMayFinish.countDown();
        for (int i = 0; i < results.size(); i++) {
            assertThat(results.get(i).get(10, TimeUnit.SECONDS)).isEqualTo(i * 10);
        }
        assertThat(batches).containsExactly(List.of(1, 2, 3, 4));
        assertThat(alone.get()).isEqualTo(5);
    }

    @Test
    void aStatementWhoseConnectionWasAbortedFailsItsCallersAndTheQueueBehindThem() throws Exception {
        CountDownLatch batchStarted = new CountDownLatch(1);
        CountDownLatch batchMayFail = new CountDownLatch(1);
        Combiner<Integer, Integer> combiner = combiner(1, 2, items -> {
            batches.add(List.copyOf(items));
            batchStarted.countDown();
            try {
                batchMayFail.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            // the server answered not even the cancel: the connection was aborted
            throw new SQLException("An I/O error occurred while sending to the backend.", "08006");
        });
        List<Future<Integer>> results = queueBehindFirst(combiner, 2);
        firstMayFinish.countDown();
        assertThat(batchStarted.await(10, TimeUnit.SECONDS)).isTrue();
        // two more queue while the shared statement hangs
        List<Future<Integer>> behind =
                List.of(threads.submit(() -> combiner.submit(3)), threads.submit(() -> combiner.submit(4)));
        await().atMost(10, TimeUnit.SECONDS).until(() -> combiner.queued() == 2);
        batchMayFail.countDown();

        assertThat(results.get(0).get(10, TimeUnit.SECONDS)).isZero();
        for (Future<Integer> failed : List.of(results.get(1), results.get(2), behind.get(0), behind.get(1))) {
            assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("unavailable: 08006");
        }
        assertThat(batches).containsExactly(List.of(1, 2)); // the queue behind it never ran
        assertThat(alone.get()).isEqualTo(1);
        assertThat(threads.submit(() -> combiner.submit(5)).get(10, TimeUnit.SECONDS))
                .isEqualTo(50);
    }

    @Test
    void aLostConnectionIsTheDatabaseFailingToo() throws Exception {
        Combiner<Integer, Integer> combiner = combiner(1, 32, items -> {
            throw new SQLTransientConnectionException("connection lost", "08006");
        });
        List<Future<Integer>> results = queueBehindFirst(combiner, 2);
        firstMayFinish.countDown();
        assertThat(results.get(0).get(10, TimeUnit.SECONDS)).isZero();
        assertThatThrownBy(() -> results.get(1).get(10, TimeUnit.SECONDS)).hasMessageContaining("unavailable: 08006");
        assertThatThrownBy(() -> results.get(2).get(10, TimeUnit.SECONDS)).hasMessageContaining("unavailable: 08006");
    }

    @Test
    void aFailureOfTheLeadersOwnCodeReachesEveryCallerOfItsBatch() throws Exception {
        Combiner<Integer, Integer> combiner = combiner(1, 32, items -> List.of(1)); // too few results
        List<Future<Integer>> results = queueBehindFirst(combiner, 3);
        firstMayFinish.countDown();
        assertThat(results.get(0).get(10, TimeUnit.SECONDS)).isZero();
        for (Future<Integer> failed : results.subList(1, 4)) {
            assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS)).hasMessageContaining("1 results for 3 writes");
        }
        assertThat(threads.submit(() -> combiner.submit(9)).get(10, TimeUnit.SECONDS))
                .isEqualTo(90);
    }

    @Test
    void manyCallersOnFewLanesAllGetTheirOwnResults() throws Exception {
        firstMayFinish.countDown();
        Combiner<Integer, Integer> combiner = combiner(2, 8, this::timesTen);
        List<Future<Integer>> results = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            int item = i;
            results.add(threads.submit(() -> combiner.submit(item)));
        }
        for (int i = 0; i < results.size(); i++) {
            assertThat(results.get(i).get(30, TimeUnit.SECONDS)).isEqualTo(i * 10);
        }
        int inBatches = batches.stream().mapToInt(List::size).sum();
        assertThat(inBatches + alone.get()).isEqualTo(2000);
        assertThat(batches).allSatisfy(b -> assertThat(b).hasSizeBetween(2, 8));
        assertThat(combiner.queued()).isZero();
    }

    @Test
    void lanesAndBatchesAreChecked() {
        assertThatThrownBy(() -> combiner(0, 2, this::timesTen)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> combiner(1, 1, this::timesTen)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> combiner(1, 2, 0, this::timesTen)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aWriteAloneWhoseConnectionFailedFailsTheQueueBehindIt() throws Exception {
        CountDownLatch mayFail = new CountDownLatch(1);
        Combiner<Integer, Integer> combiner = new Combiner<>(
                1,
                32,
                item -> 1,
                Long.MAX_VALUE,
                item -> {
                    alone.incrementAndGet();
                    try {
                        mayFail.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    throw new IllegalStateException("connection lost", new SQLException("connection lost", "08006"));
                },
                this::timesTen,
                e -> new IllegalStateException("unavailable", e));
        List<Future<Integer>> results = new ArrayList<>();
        results.add(threads.submit(() -> combiner.submit(0)));
        await().atMost(10, TimeUnit.SECONDS).until(() -> alone.get() == 1);
        for (int i = 1; i <= 3; i++) {
            int item = i;
            results.add(threads.submit(() -> combiner.submit(item)));
            await().atMost(10, TimeUnit.SECONDS).until(() -> combiner.queued() == item);
        }
        mayFail.countDown();
        for (Future<Integer> failed : results) {
            assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS)).hasMessageContaining("connection lost");
        }
        assertThat(batches).isEmpty(); // the queue never ran
        assertThat(alone.get()).isEqualTo(1);
    }
}
