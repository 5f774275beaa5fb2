package dev.exactly.idempotency.postgres;

import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Lets concurrent callers of one kind of write share a statement and its commit. At most {@code lanes} of them
 * run at once; a caller that finds a lane free runs its own write alone, as it would without this class (so a
 * store that is not busy answers as fast as before). A caller that finds every lane busy waits in a queue, and
 * when a lane comes free, the first in the queue takes up to {@code maxBatch} of the queue (itself first, and no
 * more once their sizes add up to {@code maxBatchSize}) and
 * runs their writes as one statement in its own thread, and every caller in it gets its own result.
 *
 * <p>A shared statement changes nothing about what each write is: the store's statements are one row each, the
 * same rules, in one transaction that commits before anyone is answered, and a statement that fails commits
 * nothing. When the connection of the shared statement (or of a write alone in its lane) failed, or the server
 * did not answer even its cancel (the connection is then aborted), its callers and every caller queued behind them
 * fail with that failure at once, so that a stalled database fails closed for all of them within one statement's
 * bound; when it failed otherwise (its writes met another transaction on a key, a deadlock, a statement timeout
 * while waiting for a row another transaction holds, or one caller's values were refused), each of its callers
 * runs its own write alone, and only the write that fails alone fails.
 *
 * <p>Waiting callers park on a future (a virtual thread unmounts) and cannot be interrupted out of a batch they
 * are part of: the leader answers every caller of its batch, whatever happens to the statement.
 *
 * @param <I> one caller's write
 * @param <O> its result
 */
final class Combiner<I, O extends @Nullable Object> {
    /** One write, on its own. */
    @FunctionalInterface
    interface Alone<I, O extends @Nullable Object> {
        O run(I item);
    }

    /** Several writes as one statement: one result per write, in their order. */
    @FunctionalInterface
    interface Together<I, O extends @Nullable Object> {
        List<O> run(List<I> items) throws SQLException;
    }

    /** Turns a failure of the shared statement into what each of its callers throws. */
    @FunctionalInterface
    interface Failure {
        RuntimeException of(SQLException e);
    }

    private final int lanes;
    private final int maxBatch;
    private final ToLongFunction<I> size;
    private final long maxBatchSize;
    private final Alone<I, O> alone;
    private final Together<I, O> together;
    private final Failure failure;
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Entry<I>> queue = new ArrayDeque<>();
    private final LongAdder shared = new LongAdder();
    /** Lanes in use: callers running alone and leaders running a batch; guarded by {@link #lock}. */
    private int running;

    /**
     * @param lanes        writes run at once before callers queue; at least one
     * @param maxBatch     most writes in one shared statement; at least two
     * @param size         a write's bytes, as far as they matter (a response's body)
     * @param maxBatchSize a shared statement takes no more writes once theirs add up to this (its first write is
     *                     taken whatever its size), so that a few large writes do not make a statement that outlasts
     *                     the statement timeout for everyone in it
     */
    Combiner(
            int lanes,
            int maxBatch,
            ToLongFunction<I> size,
            long maxBatchSize,
            Alone<I, O> alone,
            Together<I, O> together,
            Failure failure) {
        if (lanes < 1 || maxBatch < 2 || maxBatchSize < 1) {
            throw new IllegalArgumentException("lanes and maxBatchSize must be at least 1 and maxBatch at least 2");
        }
        this.lanes = lanes;
        this.maxBatch = maxBatch;
        this.size = size;
        this.maxBatchSize = maxBatchSize;
        this.alone = alone;
        this.together = together;
        this.failure = failure;
    }

    /** Runs {@code item}'s write, alone or in a shared statement, and returns its result or throws its failure. */
    O submit(I item) {
        Entry<I> me = null; // only a caller that queues needs one
        lock.lock();
        try {
            if (running < lanes) {
                running++;
            } else {
                me = new Entry<>(item);
                queue.addLast(me);
            }
        } finally {
            lock.unlock();
        }
        if (me == null) {
            RuntimeException unavailable = null;
            try {
                return alone.run(item);
            } catch (RuntimeException e) {
                unavailable = databaseFailed(e) ? e : null;
                throw e;
            } finally {
                handOff(unavailable);
            }
        }
        Object signal = me.wake.join();
        if (signal instanceof Lead<?> lead) {
            @SuppressWarnings("unchecked")
            List<Entry<I>> batch = (List<Entry<I>>) lead.batch();
            RuntimeException unavailable = null;
            Done<O> mine;
            try {
                mine = runBatch(batch);
                unavailable = mine.unavailable;
            } finally {
                handOff(unavailable);
            }
            return mine.result(this, item);
        }
        @SuppressWarnings("unchecked")
        Done<O> done = (Done<O>) signal;
        return done.result(this, item);
    }

    /**
     * Whether a write's failure is the database's: the connection failed, or the server is gone (a statement whose
     * cancel went unanswered has its connection aborted). A statement timeout whose cancel the server answered is
     * not: the server is up, and the statement may have waited for a row that another transaction holds (a key
     * claimed inside a caller's transaction still open), which says nothing about the other writes.
     */
    private static boolean databaseFailed(RuntimeException e) {
        return e.getCause() instanceof SQLException s && databaseFailed(s);
    }

    private static boolean databaseFailed(SQLException e) {
        return SqlFailures.isConnectivity(e);
    }

    /** Callers waiting for a lane now (for tests). */
    int queued() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    /** Writes that went in a shared statement of two or more, since this combiner was made. */
    long shared() {
        return shared.sum();
    }

    /**
     * Gives the lane to the first queued caller with the batch it is to run, or frees it. After a shared statement
     * failed as unavailable, the queue fails with it instead.
     */
    private void handOff(@Nullable RuntimeException unavailable) {
        List<Entry<I>> next;
        lock.lock();
        try {
            if (queue.isEmpty()) {
                running--;
                return;
            }
            if (unavailable != null) {
                next = new ArrayList<>(queue);
                queue.clear();
                running--;
            } else {
                next = new ArrayList<>(Math.min(queue.size(), maxBatch));
                long bytes = 0;
                while (!queue.isEmpty() && next.size() < maxBatch) {
                    bytes += size.applyAsLong(queue.peekFirst().item);
                    if (!next.isEmpty() && bytes > maxBatchSize) {
                        break;
                    }
                    next.add(queue.pollFirst());
                }
            }
        } finally {
            lock.unlock();
        }
        if (unavailable != null) {
            Done<O> failed = Done.failed(unavailable, false);
            next.forEach(e -> e.wake.complete(failed));
        } else {
            next.getFirst().wake.complete(new Lead<>(next));
        }
    }

    /**
     * Runs a batch led by its first entry, in the leader's lane: answers the others (every one of them, whatever
     * happens), and returns the leader's own answer.
     */
    private Done<O> runBatch(List<Entry<I>> batch) {
        if (batch.size() == 1) {
            try {
                return Done.of(alone.run(batch.getFirst().item));
            } catch (RuntimeException e) {
                return Done.failed(e, databaseFailed(e));
            } catch (Error e) {
                return Done.failed(e, false);
            }
        }
        List<Done<O>> answers = new ArrayList<>(batch.size());
        try {
            List<I> items = new ArrayList<>(batch.size());
            batch.forEach(e -> items.add(e.item));
            List<O> results = together.run(items);
            shared.add(items.size());
            if (results.size() != items.size()) {
                throw new IllegalStateException(results.size() + " results for " + items.size() + " writes");
            }
            results.forEach(r -> answers.add(Done.of(r)));
        } catch (SQLException e) {
            Done<O> answer = databaseFailed(e) ? Done.failed(failure.of(e), true) : Done.alone();
            answers.clear();
            batch.forEach(x -> answers.add(answer));
        } catch (RuntimeException | Error e) {
            Done<O> answer = Done.failed(e, false);
            answers.clear();
            batch.forEach(x -> answers.add(answer));
        } finally {
            for (int i = 1; i < batch.size(); i++) {
                batch.get(i)
                        .wake
                        .complete(
                                i < answers.size()
                                        ? answers.get(i)
                                        : Done.failed(
                                                new IllegalStateException("the shared statement's leader failed"),
                                                false));
            }
        }
        return answers.getFirst();
    }

    /** A queued caller: woken with a {@link Lead} or its {@link Done}. */
    private static final class Entry<I> {
        final I item;
        final CompletableFuture<Object> wake = new CompletableFuture<>();

        Entry(I item) {
            this.item = item;
        }
    }

    /** The woken caller is to run this batch (itself first). */
    private record Lead<E>(List<E> batch) {}

    /** A caller's answer: its result, its failure, or that it is to run its write alone. */
    private record Done<O extends @Nullable Object>(
            @Nullable O value,
            @Nullable Throwable thrown,
            boolean runAlone,
            @Nullable RuntimeException unavailable) {
        static <O extends @Nullable Object> Done<O> of(O value) {
            return new Done<>(value, null, false, null);
        }

        static <O> Done<O> alone() {
            return new Done<>(null, null, true, null);
        }

        /** @param database the database failed (not a conflict): what is queued behind the batch fails with it */
        static <O> Done<O> failed(Throwable thrown, boolean database) {
            return new Done<>(null, thrown, false, database && thrown instanceof RuntimeException r ? r : null);
        }

        /** The caller's result: {@code value} is one whenever the write neither runs alone nor failed. */
        @SuppressWarnings("NullAway") // value is an O there (null only where O admits it), unknown to the record's type
        <I> O result(Combiner<I, O> combiner, I item) {
            if (runAlone) {
                return combiner.alone.run(item);
            }
            if (thrown instanceof RuntimeException r) {
                throw r;
            }
            if (thrown instanceof Error e) {
                throw e;
            }
            return value;
        }
    }
}
