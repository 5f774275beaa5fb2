package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyRequest;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Logs store failures, at most one line per {@code interval}: a store that fails fails every guarded
 * request (each answers 503 and its handler does not run), so the first failure is logged at once and the
 * rest are summed up in the next line. The meter {@code exactly.idempotency.store.errors} counts every
 * one. A line names the route, the failure, and, for the usual set-up mistakes (a missing table, a table
 * of another shape, missing privileges), the fix.
 */
public final class StoreErrorLogger implements IdempotencyListener {
    /** At most one line per this interval, unless configured otherwise. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);

    private static final Log log = LogFactory.getLog(StoreErrorLogger.class);

    private final InstantSource clock;
    private final boolean passThrough;
    private final long intervalMillis;
    private final AtomicLong nextLineAt = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong unreported = new AtomicLong();

    /**
     * @param clock    when a failure happened
     * @param interval the least time between two lines (positive)
     */
    public StoreErrorLogger(InstantSource clock, Duration interval) {
        this(clock, interval, false);
    }

    /**
     * @param clock       when a failure happened
     * @param interval    the least time between two lines (positive)
     * @param passThrough whether guarded requests pass through unguarded while the store fails
     *                    ({@code when-store-unavailable: pass-through}) rather than answer 503
     */
    public StoreErrorLogger(InstantSource clock, Duration interval, boolean passThrough) {
        this.passThrough = passThrough;
        this.clock = Objects.requireNonNull(clock, "clock");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive: " + interval);
        }
        this.intervalMillis = interval.toMillis();
    }

    @Override
    public void onStoreError(IdempotencyRequest request, Throwable error) {
        long failures = unreported.incrementAndGet();
        long now = clock.millis();
        long next = nextLineAt.get();
        if (now < next || !nextLineAt.compareAndSet(next, now + intervalMillis)) {
            return;
        }
        unreported.addAndGet(-failures);
        StringBuilder line = new StringBuilder("Idempotency store failed on ")
                .append(request.scope().method())
                .append(' ')
                .append(request.scope().route())
                .append(
                        passThrough
                                ? ": guarded requests pass through to their handlers unguarded (when-store-unavailable: "
                                        + "pass-through) until it answers"
                                : ": guarded requests answer 503 and their handlers do not run until it answers");
        if (failures > 1) {
            line.append(" (").append(failures).append(" failures since the last line)");
        }
        // one line, whatever the driver's message holds (PostgreSQL's end with a "Position:" line)
        line.append(": ").append(String.valueOf(error.getMessage()).replaceAll("\\s*[\\r\\n]+\\s*", " "));
        hint(error).ifPresent(hint -> line.append(". ").append(hint));
        log.warn(line);
        if (log.isDebugEnabled()) {
            log.debug("Idempotency store failure", error);
        }
    }

    /**
     * How to fix a failure that comes from the set-up rather than from an outage: a missing table
     * (SQLState 42P01), a missing claim function (42883: a table made before the claim function's migration,
     * or dropped with it), a missing column (42703), missing privileges (42501).
     */
    public static Optional<String> hint(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && sql.getSQLState() != null) {
                switch (sql.getSQLState()) {
                    case "42P01" -> {
                        return Optional.of("The store's table is missing: " + PostgresStores.HOW_TO_CREATE);
                    }
                    case "42883" -> {
                        return Optional.of("The store's claim function is missing (the table predates the migration "
                                + "that adds it, or lost it): " + PostgresStores.HOW_TO_UPGRADE);
                    }
                    case "42703" -> {
                        return Optional.of("The store's table lacks a column it uses: it was not created by "
                                + PostgresStores.MIGRATION + ": drop or rename it, or configure another table name "
                                + "for the store; then " + PostgresStores.HOW_TO_CREATE);
                    }
                    case "42501" -> {
                        return Optional.of("The database user may not use the store's table: grant it SELECT, "
                                + "INSERT, UPDATE and DELETE, and EXECUTE on its claim function");
                    }
                    default -> {
                        // an outage or another failure: the message says it all
                    }
                }
            }
        }
        return Optional.empty();
    }
}
