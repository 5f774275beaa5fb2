package dev.exactly.idempotency.postgres;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The statement timeout of the store: cancels a statement that runs longer than its timeout, as JDBC's
 * {@link Statement#setQueryTimeout} does, and with the same effect ({@link Statement#cancel()}: the server
 * ends the statement with SQLState 57014), but without a timer task per statement. PostgreSQL JDBC
 * schedules a task on one timer shared by every connection of the process for each statement with a query
 * timeout, and cancels it afterwards: a lock, a heap insertion and removal and an allocation per statement,
 * on the hot path of every claim and completion. Here a statement under way is an entry in a concurrent
 * set, and one daemon thread looks over the set every {@value #TICK_MILLIS} ms; a statement is cancelled
 * within that much after its timeout (the timeouts are whole seconds); after ten seconds without any, the
 * thread ends, and the next statement starts another. The cancel request itself goes out on a thread of
 * its own, so that a server that does not answer it cannot hold up the next one.
 *
 * <p>A cancel of a statement that has just finished does nothing: the driver cancels only a statement
 * that is still executing, and the statement object is never reused for another execution of the
 * connection's next user.
 */
final class StatementWatchdog {
    static final long TICK_MILLIS = 100;
    /** Ticks without a statement under way after which the thread ends (a later statement starts another). */
    private static final int IDLE_TICKS = 100;

    private static final Set<Watch> RUNNING = ConcurrentHashMap.newKeySet();
    private static volatile boolean started;

    private StatementWatchdog() {}

    /** A statement under way, until {@link #close()}. */
    static final class Watch implements AutoCloseable {
        private final Statement statement;
        private final long deadline;

        private Watch(Statement statement, long deadline) {
            this.statement = statement;
            this.deadline = deadline;
        }

        @Override
        public void close() {
            RUNNING.remove(this);
        }
    }

    /** Watches {@code statement}, which is about to run, until the returned watch is closed. */
    static Watch watch(Statement statement, long timeoutNanos) {
        Watch watch = new Watch(statement, System.nanoTime() + timeoutNanos);
        RUNNING.add(watch);
        // after the add: a thread that ends re-checks the set after it cleared the flag (see stopIfIdle)
        if (!started) {
            start();
        }
        return watch;
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
        if (RUNNING.isEmpty()) {
            return true;
        }
        started = true;
        return false;
    }

    private static void run() {
        int idle = 0;
        while (true) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS));
            idle = RUNNING.isEmpty() ? idle + 1 : 0;
            if (idle >= IDLE_TICKS && stopIfIdle()) {
                return;
            }
            long now = System.nanoTime();
            for (Watch watch : RUNNING) {
                if (now - watch.deadline >= 0 && RUNNING.remove(watch)) {
                    Thread.ofVirtual().name("exactly-postgres-cancel").start(() -> cancel(watch.statement));
                }
            }
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
