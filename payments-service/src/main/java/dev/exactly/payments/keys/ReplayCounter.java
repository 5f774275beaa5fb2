package dev.exactly.payments.keys;

import dev.exactly.idempotency.ScopeKey;
import dev.exactly.payments.db.Jdbc;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How often each scope's answer was replayed, by either tier ({@code payments_replay}), for the key status
 * endpoint. Counts are written off the request path. A replay is answered while its request may still hold a
 * pooled connection (the durable claim's transaction); counting it there would take a second connection,
 * and a burst of replays as large as the pool would then wait on itself. Instead {@link #count} only
 * queues the scope (never blocking: a full queue drops the count, it is a statistic), and one writer
 * thread folds what is queued into a single upsert transaction at a time.
 */
public final class ReplayCounter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplayCounter.class);
    private static final int QUEUE = 10_000;
    private static final int BATCH = 500;
    private static final String COUNT_REPLAYS = """
            INSERT INTO payments_replay AS p (scope_key, replays, last_replayed_at)
            VALUES (?, ?, statement_timestamp())
            ON CONFLICT (scope_key) DO UPDATE SET replays = p.replays + excluded.replays,
                                                  last_replayed_at = excluded.last_replayed_at
            """;
    private static final String REPLAYS = "SELECT replays FROM payments_replay WHERE scope_key = ?";

    private final Jdbc jdbc;
    private final BlockingQueue<String> queue = new ArrayBlockingQueue<>(QUEUE);
    private final Thread writer;
    private volatile boolean running = true;

    public ReplayCounter(Jdbc jdbc) {
        this.jdbc = jdbc;
        this.writer = Thread.ofPlatform().daemon().name("replay-counter").start(this::drain);
    }

    /** Queues one replay of the scope; never blocks and never fails the caller. */
    public void count(ScopeKey key) {
        queue.offer(key.hash());
    }

    /** How often a scope was replayed (the counts written so far). */
    public long replays(ScopeKey key) {
        return jdbc.queryOne(REPLAYS, s -> s.setString(1, key.hash()), rs -> rs.getLong(1))
                .orElse(0L);
    }

    /** Whether every queued count has been written (for tests and shutdown). */
    boolean idle() {
        return queue.isEmpty();
    }

    private void drain() {
        List<String> batch = new ArrayList<>(BATCH);
        while (running || !queue.isEmpty()) {
            try {
                String first = queue.poll(200, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, BATCH - 1);
                write(batch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                log.warn("replay counts lost ({} replays): {}", batch.size(), e.toString());
            } finally {
                batch.clear();
            }
        }
    }

    private void write(List<String> batch) {
        Map<String, Long> counts = new TreeMap<>(); // sorted: concurrent writers lock rows in one order
        batch.forEach(hash -> counts.merge(hash, 1L, Long::sum));
        jdbc.inTransaction(c -> {
            counts.forEach((hash, n) -> Jdbc.update(c, COUNT_REPLAYS, s -> {
                s.setString(1, hash);
                s.setLong(2, n);
            }));
            return null;
        });
    }

    /** Writes what is queued and stops the writer. */
    @Override
    public void close() {
        running = false;
        try {
            writer.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
