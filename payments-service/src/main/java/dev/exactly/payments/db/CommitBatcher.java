package dev.exactly.payments.db;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Commits the pipelines of concurrent callers together: one transaction, one round trip and one commit
 * (one WAL flush) for as many as wait when a transaction can start. Group commit, done where the work is
 * known: PostgreSQL's own group commit only shares the flush, while each transaction still pays its round
 * trip, its start and its commit record, and its backend a wake-up.
 *
 * <p>A caller hands over its {@link Pipeline} without {@code COMMIT} and waits. No caller waits for a
 * batch to fill: whoever finds a transaction slot free ({@code maxInFlight} at most at once) takes every
 * pipeline waiting (up to {@code maxParts}) and runs them, its own or not; while the slots are busy, the
 * pipelines that arrive form the next batch. A lone caller on an idle service runs at once, as it would
 * alone.
 *
 * <p>A second transaction of the same batcher starts while one runs only once the latest to start has run
 * {@code overlapAfter}, or as soon as a full batch ({@code maxParts}) waits: until then the pipelines that
 * arrive wait for it and go into the next batch, which is then larger. Two transactions at once cost the
 * database more per pipeline than one (two backends busy, two commits per round) and on a saturated machine
 * buy no earlier commit; they are worth it when a transaction is slow, a batch waiting for a row lock or a
 * backend waiting for the CPU, and then the next one need not wait for it, and when the next batch is full,
 * since waiting longer would only delay it. Zero starts a transaction whenever a slot is free.
 *
 * <p>All or nothing, for each caller as for the batch: every statement of a batch commits, or none. A
 * statement that fails aborts all of them, and each caller is told to run its work alone
 * ({@link #commit} returns {@code false}), where the failure is its own again (a batch of one hands the
 * caller its own failure). A failure that may hide a commit (the connection lost) is not retried: every
 * caller of the batch gets it, as a caller that ran alone would. Within a batch the pipelines run in the
 * order of the keys they came with, so that batches running at once take the row locks their keys stand
 * for in one order.
 */
public final class CommitBatcher {
    private final Jdbc jdbc;
    private final int maxParts;
    private final int maxInFlight;
    private final long overlapAfterNanos;
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Part> waiting = new ArrayDeque<>();
    /** When each running transaction started ({@link System#nanoTime}), in the order they started. */
    private final ArrayList<Long> running = new ArrayList<>();

    private enum State {
        WAITING,
        COMMITTED,
        ALONE,
        FAILED
    }

    private static final class Part {
        final Pipeline pipeline;
        final String order;
        /** Signalled when its batch ends, or when it heads the queue as a transaction slot frees. */
        final Condition woken;

        State state = State.WAITING;

        @Nullable
        RuntimeException failure;

        Part(Pipeline pipeline, String order, Condition woken) {
            this.pipeline = pipeline;
            this.order = order;
            this.woken = woken;
        }
    }

    /**
     * A batcher that starts a transaction whenever one of its slots is free.
     *
     * @param maxParts    most pipelines in one transaction
     * @param maxInFlight most batch transactions at once (each holds a pooled connection)
     */
    public CommitBatcher(Jdbc jdbc, int maxParts, int maxInFlight) {
        this(jdbc, maxParts, maxInFlight, Duration.ZERO);
    }

    /**
     * @param maxParts     most pipelines in one transaction
     * @param maxInFlight  most batch transactions at once (each holds a pooled connection)
     * @param overlapAfter how long the latest transaction to start runs before another may start beside it
     *                     (at once when {@code maxParts} pipelines wait)
     */
    public CommitBatcher(Jdbc jdbc, int maxParts, int maxInFlight, Duration overlapAfter) {
        if (maxParts < 1 || maxInFlight < 1) {
            throw new IllegalArgumentException("a batch takes at least one pipeline, and at least one batch runs");
        }
        if (overlapAfter.isNegative()) {
            throw new IllegalArgumentException("overlapAfter must not be negative");
        }
        this.jdbc = jdbc;
        this.maxParts = maxParts;
        this.maxInFlight = maxInFlight;
        this.overlapAfterNanos = overlapAfter.toNanos();
    }

    /**
     * With the lock held: zero when a transaction may start now, the nanoseconds until one may start beside
     * those running, or -1 when every slot is taken.
     */
    private long untilStart() {
        if (running.isEmpty()) {
            return 0;
        }
        if (running.size() >= maxInFlight) {
            return -1;
        }
        if (overlapAfterNanos == 0 || waiting.size() >= maxParts) {
            return 0; // a full batch waits: holding it back would make it no larger, only later
        }
        long due = running.getLast() + overlapAfterNanos - System.nanoTime();
        return Math.max(due, 0);
    }

    /**
     * Runs {@code pipeline} (without {@code COMMIT}) in a transaction with those of other callers, and
     * commits it.
     *
     * @param order where the pipeline runs among the others of its batch (the key of the rows it locks)
     * @return {@code true} when it committed, its results read; {@code false} when another pipeline of
     *     its batch failed and nothing committed: run it alone
     * @throws DatabaseException the pipeline's own failure (it ran alone), or a failure that may hide a
     *     commit of the batch
     * @throws RuntimeException what one of its readers threw (after the commit)
     */
    public boolean commit(Pipeline pipeline, String order) {
        Part mine = new Part(pipeline, order, lock.newCondition());
        boolean interrupted = false;
        lock.lock();
        try {
            waiting.add(mine);
            while (mine.state == State.WAITING) {
                long until = untilStart();
                if (until == 0 && !waiting.isEmpty()) {
                    List<Part> batch = new ArrayList<>(Math.min(maxParts, waiting.size()));
                    while (batch.size() < maxParts && !waiting.isEmpty()) {
                        batch.add(waiting.poll());
                    }
                    Long started = System.nanoTime();
                    running.add(started);
                    // whoever leads the pipelines left behind counts the time until another may start
                    Part left = waiting.peek();
                    if (left != null) {
                        left.woken.signal();
                    }
                    lock.unlock();
                    try {
                        run(batch);
                    } finally {
                        lock.lock();
                        running.remove(started);
                        // only the callers whose batch ended, and the one that leads the next batch
                        for (Part part : batch) {
                            part.woken.signal();
                        }
                        Part next = waiting.peek();
                        if (next != null) {
                            next.woken.signal();
                        }
                    }
                } else if (until > 0 && waiting.peek() == mine) {
                    try {
                        mine.woken.awaitNanos(until);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                } else {
                    mine.woken.awaitUninterruptibly();
                }
            }
        } finally {
            lock.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return switch (mine.state) {
            case COMMITTED -> true;
            case ALONE -> false;
            case FAILED -> throw mine.failure;
            case WAITING -> throw new IllegalStateException("a pipeline left its batch unfinished");
        };
    }

    /** How many pipelines wait for a transaction now. */
    int waiting() {
        lock.lock();
        try {
            return waiting.size();
        } finally {
            lock.unlock();
        }
    }

    /** Runs a batch; every part leaves it finished (committed, alone, or failed). */
    private void run(List<Part> batch) {
        try {
            if (batch.size() == 1) {
                Part part = batch.getFirst();
                jdbc.inTransaction(c -> {
                    part.pipeline.commit();
                    part.pipeline.run(c);
                    return null;
                });
                part.state = State.COMMITTED;
                return;
            }
            batch.sort(Comparator.comparing(p -> p.order));
            List<Pipeline> pipelines = new ArrayList<>(batch.size());
            for (Part part : batch) {
                pipelines.add(part.pipeline);
            }
            List<@Nullable RuntimeException> failures = jdbc.inTransaction(c -> Pipeline.runCommitting(c, pipelines));
            for (int i = 0; i < batch.size(); i++) {
                Part part = batch.get(i);
                RuntimeException failure = failures.get(i);
                if (failure == null) {
                    part.state = State.COMMITTED;
                } else {
                    part.failure = failure;
                    part.state = State.FAILED;
                }
            }
        } catch (DatabaseException e) {
            boolean alone = batch.size() > 1 && e.rolledBack();
            for (Part part : batch) {
                part.failure = e;
                part.state = alone ? State.ALONE : State.FAILED;
            }
        } catch (RuntimeException | Error e) {
            for (Part part : batch) {
                if (part.state == State.WAITING) {
                    part.failure = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                    part.state = State.FAILED;
                }
            }
            if (e instanceof Error error) {
                throw error;
            }
        }
    }
}
