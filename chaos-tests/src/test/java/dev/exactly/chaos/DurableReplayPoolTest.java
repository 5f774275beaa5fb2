package dev.exactly.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * After the hot tier forgot everything (FLUSHALL), a burst of retries of finished payments is answered by
 * the durable tier. With a small connection pool the service must still answer each with its recorded
 * bytes, quickly: a replay needs one connection.
 *
 * <p>A regression test for what the fault runs found: the durable replay path used to count the replay
 * (in the durable tier of that version) in a transaction of its own, on a second pooled connection, while the
 * claim's transaction still held the first. With as many concurrent replays as the pool has connections,
 * every connection was held by a request waiting for another until the pool's 5 s timeout; then every
 * queued request got 503 {@code database_unavailable}. Measured before the fix: pool 2, 40 concurrent
 * replays: 2 or 3 answered after about 5.2 s, the other 37-38 answered 503. Under a burst of duplicates
 * (200 payments × 3 requests in 5 s, pool 8, 3 s leases) the same stall held a pair of instances: thread
 * dumps 6 s apart each showed exactly 8 threads (the pool) in {@code countReplay} inside the claim
 * transaction with 100-165 requests queued, and half the payments stayed unacknowledged after two minutes
 * of client retries. The service now counts replays on a writer thread of its own.
 */
class DurableReplayPoolTest {

    @Test
    void durableReplaysOfFinishedPaymentsDoNotStarveASmallPool() {
        Topology.Settings smallPool =
                new Topology.Settings(1, Duration.ofSeconds(3), Duration.ofMillis(250), Duration.ofSeconds(2), 2);
        try (Topology topology = Topology.start(
                "replay-pool",
                smallPool,
                dir -> ChaosDatabase.sharedSchema("chaos_replay_pool"),
                dir -> Processor.startProcess(dir.resolve("psp.log")),
                LoadGenerator.Settings.defaults().withDuplicates(1))) {
            LoadGenerator.Run seed = topology.load().start(Payment.batch("replay-pool", 40, 7));
            assertThat(seed.await(Duration.ofMinutes(2))).isTrue();
            topology.redis().flushAll();

            Map<String, LongAdder> answers = new ConcurrentHashMap<>();
            List<Long> millis = Collections.synchronizedList(new ArrayList<>());
            Parallel.runAll(
                    seed.logs().stream()
                            .<Runnable>map(log -> () -> {
                                long start = System.nanoTime();
                                LoadGenerator.Answer answer = topology.load().send(topology.instance(0), log.payment());
                                millis.add(Duration.ofNanos(System.nanoTime() - start)
                                        .toMillis());
                                boolean same = java.util.Arrays.equals(
                                        answer.body(), log.first().orElseThrow().body());
                                answers.computeIfAbsent(same ? "recorded answer" : answer.kind(), k -> new LongAdder())
                                        .increment();
                            })
                            .toList(),
                    40);

            assertThat(answers.keySet())
                    .as("answers %s, in ms %s", answers, millis)
                    .containsExactly("recorded answer");
            assertThat(Collections.max(millis))
                    .as("slowest replay (ms) of %s", millis)
                    .isLessThan(3000);
        }
    }
}
