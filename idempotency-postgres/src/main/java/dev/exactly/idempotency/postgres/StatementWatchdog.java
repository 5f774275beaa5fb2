package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.internal.Slots;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The statement timeout of the store: cancels a statement that runs longer than its timeout, as JDBC's
 * {@link Statement#setQueryTimeout} does, and with the same effect ({@link Statement#cancel()}: the server
 * ends the statement with SQLState 57014), but without a timer task per statement. PostgreSQL JDBC
 * schedules a task on one timer shared by every connection of the process for each statement with a query
 * timeout, and cancels it afterwards: a lock, a heap insertion and removal and an allocation per statement,
 * on the hot path of every claim and completion. Here a statement under way takes a free slot of an array
 * ({@link Slots}), and one daemon thread looks over them every {@value #TICK_MILLIS} ms; a statement is cancelled
 * within that much after its timeout (the timeouts are whole seconds); after ten seconds without any, the
 * thread ends, and the next statement starts another. The cancel request itself goes out on a thread of
 * its own, so that a server that does not answer it cannot hold up the next one.
 *
 * <p>A server that does not answer at all (frozen, or behind a network that drops packets without a reset)
 * ignores the cancel too, and the statement would wait for its answer until the operating system gave up
 * on the connection, hours later, holding its caller and, through it, an idempotency key. So a statement
 * still under way one more timeout after its cancel has its connection aborted
 * ({@link java.sql.Connection#abort}: the socket is closed, the statement fails with SQLState 08006, the
 * caller's transaction is lost and the pool drops the connection): every statement ends within twice its
 * timeout, plus a tick, whatever the server does.
 *
 * <p>A cancel of a statement that has just finished does nothing: the driver cancels only a statement
 * that is still executing, and the statement object is never reused for another execution of the
 * connection's next user.
 */
final class StatementWatchdog {
    static final long TICK_MILLIS = 100;
    /** Ticks without a statement under way after which the thread ends (a later statement starts another). */
    private static final int IDLE_TICKS = 100;

    /** Slots for the statements under way: more than any pool runs at once. */
    static final int SLOTS = 1024;

    private static final Slots<Watch> RUNNING = new Slots<>(SLOTS);
    private static volatile boolean started;

    private StatementWatchdog() {}

    /** A statement under way, until {@link #close()}. */
    static final class Watch implements AutoCloseable {
        private final Statement statement;
        private final long deadline;
        private final long abortDeadline;
        /** Set by the watchdog's thread alone, once it sent the cancel. */
        private boolean cancelled;
        /** The slot it holds in {@link #RUNNING}; read by the thread that made the watch alone. */
        private int slot = Slots.OVERFLOW;

        private Watch(Statement statement, long deadline, long abortDeadline) {
            this.statement = statement;
            this.deadline = deadline;
            this.abortDeadline = abortDeadline;
        }

        @Override
        public void close() {
            RUNNING.leave(slot, this);
        }
    }

    /** Watches {@code statement}, which is about to run, until the returned watch is closed. */
    static Watch watch(Statement statement, long timeoutNanos) {
        long now = System.nanoTime();
        Watch watch = new Watch(statement, now + timeoutNanos, now + 2 * timeoutNanos);
        watch.slot = RUNNING.enter(watch);
        // after the entry: a thread that ends looks again after it cleared the flag (see stopIfIdle)
        if (!started) {
            start();
        }
        return watch;
    }

    /** Whether no statement is under way. */
    static boolean idle() {
        return RUNNING.isEmpty();
    }

    private static synchronized void start() {
        if (started) {
            return;
        }
        Thread thread = new Thread(StatementWatchdog::run, "exactly-postgres-statement-timeout");
        thread.setDaemon(true);
        thread.start();
        started = true;
    }

    /** Ends the thread when nothing is under way: clears the flag, then looks again. */
    private static synchronized boolean stopIfIdle() {
        started = false;
        if (idle()) {
            return true;
        }
        started = true;
        return false;
    }

    private static void run() {
        int idle = 0;
        while (true) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS));
            idle = idle() ? idle + 1 : 0;
            if (idle >= IDLE_TICKS && stopIfIdle()) {
                return;
            }
            long now = System.nanoTime();
            RUNNING.forEach((slot, watch) -> look(slot, watch, now));
        }
    }

    /** Cancels the watch's statement once past its deadline; aborts its connection once past the second. */
    private static void look(int slot, Watch watch, long now) {
        if (!watch.cancelled && now - watch.deadline >= 0) {
            watch.cancelled = true;
            Thread.ofVirtual().name("exactly-postgres-cancel").start(() -> cancel(watch.statement));
        } else if (watch.cancelled && now - watch.abortDeadline >= 0 && RUNNING.leave(slot, watch)) {
            Thread.ofVirtual().name("exactly-postgres-abort").start(() -> abort(watch.statement));
        }
    }

    /** Closes the connection under a statement that not even its cancel ended: the server does not answer. */
    private static void abort(Statement statement) {
        try {
            statement.getConnection().abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            // closed meanwhile: nothing is waiting on it any more
        }
    }

    private static void cancel(Statement statement) {
        try {
            statement.cancel();
        } catch (SQLException | RuntimeException e) {
            // finished and closed meanwhile, or the server cannot be reached: the statement fails by itself
        }
    }
}
