package dev.exactly.idempotency.postgres;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The statement timeout of the store: cancels a statement that runs longer than its timeout, as JDBC's
 * {@link Statement#setQueryTimeout} does, and with the same effect ({@link Statement#cancel()}: the server
 * ends the statement with SQLState 57014), but without a timer task per statement. PostgreSQL JDBC
 * schedules a task on one timer shared by every connection of the process for each statement with a query
 * timeout, and cancels it afterwards: a lock, a heap insertion and removal and an allocation per statement,
 * on the hot path of every claim and completion. Here a statement under way takes a free slot of an array
 * (a concurrent set holds those that find none free nearby), and one daemon thread looks over them every
 * {@value #TICK_MILLIS} ms; a statement is cancelled
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
    /** Slots a statement tries, from the one its hash names, before it goes to {@link #OVERFLOW}. */
    private static final int PROBES = 8;

    /**
     * Statements under way, each in a slot it took with one compare-and-set and leaves with another. A set
     * cost a statement about 0.6 µs of CPU to enter and leave (its bin's lock, a node, the shared count,
     * under the contention of every carrier thread); a free slot is one cache line's write.
     */
    private static final AtomicReferenceArray<@Nullable Watch> RUNNING = new AtomicReferenceArray<>(SLOTS);
    /** Statements that found no free slot among their probes. */
    private static final Set<Watch> OVERFLOW = ConcurrentHashMap.newKeySet();
    private static volatile boolean started;

    private StatementWatchdog() {}

    /** A statement under way, until {@link #close()}. */
    static final class Watch implements AutoCloseable {
        private final Statement statement;
        private final long deadline;
        private final long abortDeadline;
        /**
         * The set's hash of this watch, drawn when it is made: {@code Object.hashCode} would first have the JVM
         * generate an identity hash and write it into the object's header, a call into the runtime on every
         * statement. Equality stays identity.
         */
        private final int hash = ThreadLocalRandom.current().nextInt();
        /** Set by the watchdog's thread alone, once it sent the cancel. */
        private boolean cancelled;
        /** The slot it holds in {@link #RUNNING}, or -1: it is in {@link #OVERFLOW}. */
        private int slot = -1;

        private Watch(Statement statement, long deadline, long abortDeadline) {
            this.statement = statement;
            this.deadline = deadline;
            this.abortDeadline = abortDeadline;
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object other) {
            return this == other;
        }

        @Override
        public void close() {
            leave(this);
        }
    }

    /** Watches {@code statement}, which is about to run, until the returned watch is closed. */
    static Watch watch(Statement statement, long timeoutNanos) {
        long now = System.nanoTime();
        Watch watch = new Watch(statement, now + timeoutNanos, now + 2 * timeoutNanos);
        enter(watch);
        // after the entry: a thread that ends looks again after it cleared the flag (see stopIfIdle)
        if (!started) {
            start();
        }
        return watch;
    }

    private static void enter(Watch watch) {
        int first = watch.hash & (SLOTS - 1);
        for (int i = 0; i < PROBES; i++) {
            int slot = (first + i) & (SLOTS - 1);
            // the slot is written before the watch is published: the watchdog reads it from what it finds
            watch.slot = slot;
            if (RUNNING.get(slot) == null && RUNNING.compareAndSet(slot, null, watch)) {
                return;
            }
        }
        watch.slot = -1;
        OVERFLOW.add(watch);
    }

    /** Takes the watch out; false if it was out already (the watchdog took it out to abort its statement). */
    private static boolean leave(Watch watch) {
        return watch.slot >= 0 ? RUNNING.compareAndSet(watch.slot, watch, null) : OVERFLOW.remove(watch);
    }

    /** Whether no statement is under way. */
    static boolean idle() {
        if (!OVERFLOW.isEmpty()) {
            return false;
        }
        for (int i = 0; i < SLOTS; i++) {
            if (RUNNING.get(i) != null) {
                return false;
            }
        }
        return true;
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
            for (int i = 0; i < SLOTS; i++) {
                Watch watch = RUNNING.get(i);
                if (watch != null) {
                    look(watch, now);
                }
            }
            for (Watch watch : OVERFLOW) {
                look(watch, now);
            }
        }
    }

    /** Cancels the watch's statement once past its deadline; aborts its connection once past the second. */
    private static void look(Watch watch, long now) {
        if (!watch.cancelled && now - watch.deadline >= 0) {
            watch.cancelled = true;
            Thread.ofVirtual().name("exactly-postgres-cancel").start(() -> cancel(watch.statement));
        } else if (watch.cancelled && now - watch.abortDeadline >= 0 && leave(watch)) {
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
