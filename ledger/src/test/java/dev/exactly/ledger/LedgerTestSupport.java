package dev.exactly.ledger;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A fresh schema with the ledger's tables, a ledger on a test clock, and helpers. */
abstract class LedgerTestSupport {

    static final Currency USD = Currency.of("USD");
    static final Currency EUR = Currency.of("EUR");
    static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    DataSource dataSource;
    MutableClock clock;
    Ledger ledger;
    private HikariDataSource pool;

    @BeforeEach
    void freshLedger() {
        pool = pooled(TestPostgres.freshSchema("ledger"), 20);
        dataSource = pool;
        LedgerSchema.migrate(dataSource);
        clock = new MutableClock(START);
        ledger = Ledger.of(dataSource, clock);
    }

    @AfterEach
    void closePool() {
        pool.close();
    }

    /** A small pool over {@code plain}, opening connections only as they are needed. */
    static HikariDataSource pooled(DataSource plain, int size) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(plain);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setPoolName("ledger-test");
        return new HikariDataSource(config);
    }

    static Money usd(long cents) {
        return Money.of(cents, USD);
    }

    Account open(String code, AccountType type) {
        return ledger.openAccount(AccountSpec.of(code, type, USD));
    }

    Account open(AccountSpec spec) {
        return ledger.openAccount(spec);
    }

    /** debit {@code debit}, credit {@code credit}, {@code cents} USD. */
    static EntryRequest transfer(Account debit, Account credit, long cents) {
        return EntryRequest.builder()
                .debit(debit.id(), usd(cents))
                .credit(credit.id(), usd(cents))
                .build();
    }

    Connection connection() throws SQLException {
        Connection c = dataSource.getConnection();
        c.setAutoCommit(false);
        return c;
    }

    /** The server process of a connection (to watch it in {@code pg_stat_activity}). */
    static int backendPid(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** Whether the server process {@code pid} is waiting for a lock (a row lock, a unique index entry). */
    boolean waitsOnLock(int pid) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps =
                        c.prepareStatement("SELECT wait_event_type FROM pg_stat_activity WHERE pid = ?")) {
            ps.setInt(1, pid);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && "Lock".equals(rs.getString(1));
            }
        }
    }

    /**
     * Runs {@code threads} tasks released at the same moment and returns their results in task order;
     * rethrows the first failure.
     */
    static <T> List<T> concurrently(int threads, IntFunction<Callable<T>> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch ready = new CountDownLatch(threads);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Callable<T> work = task.apply(i);
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    return work.call();
                }));
            }
            ready.await();
            go.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(60, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }
}
