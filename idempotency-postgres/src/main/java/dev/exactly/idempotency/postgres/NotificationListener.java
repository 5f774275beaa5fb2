package dev.exactly.idempotency.postgres;

import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.spi.LocalWaiters;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * One dedicated connection that LISTENs on the store's channel, on a daemon thread that blocks in
 * {@link PGConnection#getNotifications(int)} (no round trip while waiting) and hands every notified key
 * to {@link LocalWaiters#signal}. After every (re)connection it calls {@link LocalWaiters#signalAll}, so
 * that waiters re-read whatever changed while nobody listened. A silent connection is checked with a
 * round trip every health-check interval, so a half-open socket is noticed.
 */
final class NotificationListener implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(NotificationListener.class.getName());
    private static final Pattern SCOPE_KEY = Pattern.compile("[0-9a-f]{64}");
    private static final Duration MIN_BACKOFF = Duration.ofMillis(50);
    private static final String HEALTH_CHECK = """
            SELECT 1
            """;
    private static final String UNLISTEN = """
            UNLISTEN *
            """;

    private final DataSource dataSource;
    private final PostgresStoreConfig config;
    private final LocalWaiters waiters;
    private final Jdbc jdbc;
    private final AtomicBoolean started = new AtomicBoolean();
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile boolean listening;
    private volatile int backendPid;
    private volatile long connections;
    private volatile @Nullable Thread thread;

    NotificationListener(DataSource dataSource, PostgresStoreConfig config, LocalWaiters waiters) {
        this.dataSource = dataSource;
        this.config = config;
        this.waiters = waiters;
        this.jdbc = new Jdbc(config.statementTimeout());
    }

    /** Starts the thread on first use; cheap afterwards. */
    void ensureStarted() {
        if (!started.get() && started.compareAndSet(false, true) && closed.getCount() > 0) {
            Thread t = Thread.ofPlatform()
                    .name("exactly-idempotency-listener-" + config.notificationChannel())
                    .daemon(true)
                    .unstarted(this::run);
            thread = t;
            t.start();
        }
    }

    /** Whether the LISTEN is in place right now (and the waiters were signalled after it was set up). */
    boolean isListening() {
        return listening;
    }

    /** The server process of the listener connection (for tests that cut it). */
    int backendPid() {
        return backendPid;
    }

    /** How many times the listener has connected (for tests and gauges). */
    long connections() {
        return connections;
    }

    private void run() {
        Duration backoff = MIN_BACKOFF;
        while (closed.getCount() > 0) {
            try (Connection connection = dataSource.getConnection()) {
                listen(connection);
                backoff = MIN_BACKOFF;
                receive(connection);
                unlistenQuietly(connection);
            } catch (SQLException | RuntimeException e) {
                if (closed.getCount() > 0) {
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "idempotency notification listener lost its connection; reconnecting",
                            e);
                }
            } finally {
                listening = false;
            }
            backoff = pause(backoff);
        }
    }

    @SuppressWarnings("NonAtomicVolatileUpdate") // one writer, the listener's own thread; readers only read
    private void listen(Connection connection) throws SQLException {
        connection.setAutoCommit(true);
        PGConnection pg = connection.unwrap(PGConnection.class);
        // the channel matches [a-z_][a-z0-9_]* (checked by PostgresStoreConfig); LISTEN takes no parameter
        jdbc.execute(connection, "LISTEN " + config.notificationChannel());
        backendPid = pg.getBackendPID();
        connections++;
        // whatever changed while nobody listened: every waiter re-reads
        waiters.signalAll();
        listening = true;
    }

    private void receive(Connection connection) throws SQLException {
        PGConnection pg = connection.unwrap(PGConnection.class);
        int pollMillis = (int) config.listenerPollInterval().toMillis();
        long healthCheckNanos = config.listenerHealthCheckInterval().toNanos();
        long lastHeard = System.nanoTime();
        while (closed.getCount() > 0) {
            PGNotification[] notifications = pg.getNotifications(pollMillis);
            long now = System.nanoTime();
            if (notifications != null && notifications.length > 0) {
                lastHeard = now;
                for (PGNotification notification : notifications) {
                    dispatch(notification);
                }
            } else if (now - lastHeard >= healthCheckNanos) {
                jdbc.execute(connection, HEALTH_CHECK);
                lastHeard = now;
            }
        }
    }

    private void dispatch(PGNotification notification) {
        String payload = notification.getParameter();
        if (config.notificationChannel().equals(notification.getName())
                && SCOPE_KEY.matcher(payload).matches()) {
            waiters.signal(new ScopeKey(payload));
        }
    }

    private void unlistenQuietly(Connection connection) {
        try {
            jdbc.execute(connection, UNLISTEN);
        } catch (SQLException e) {
            LOG.log(System.Logger.Level.DEBUG, "UNLISTEN failed while closing", e);
        }
    }

    /** Waits {@code backoff} (or until closed) and returns the next, doubled up to the configured maximum. */
    private Duration pause(Duration backoff) {
        try {
            closed.await(backoff.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed.countDown();
        }
        Duration doubled = backoff.multipliedBy(2);
        return doubled.compareTo(config.maxReconnectBackoff()) > 0 ? config.maxReconnectBackoff() : doubled;
    }

    /** Stops the thread; waits up to two poll intervals for it to close its connection. */
    @Override
    public void close() {
        closed.countDown();
        Thread t = thread;
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(config.listenerPollInterval().multipliedBy(2).plusMillis(100));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
