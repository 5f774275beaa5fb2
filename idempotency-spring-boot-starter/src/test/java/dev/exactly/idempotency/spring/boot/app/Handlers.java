package dev.exactly.idempotency.spring.boot.app;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** What the test controller did, per request reference (the {@code ref} of the JSON body). */
public final class Handlers {
    /** A test header naming the reference, read before the body, by the arrival counter. */
    public static final String REF_HEADER = "X-Test-Ref";
    private static final Duration MAX_HOLD = Duration.ofSeconds(30);

    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> arrivals = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
    private final Map<String, Boolean> virtualThreads = new ConcurrentHashMap<>();
    private final AtomicLong sequence = new AtomicLong();

    /** Holds the handler of {@code ref} (once it runs) until {@link #release}. */
    public void hold(String ref) {
        gates.put(ref, new CountDownLatch(1));
    }

    public void release(String ref) {
        CountDownLatch gate = gates.get(ref);
        if (gate != null) {
            gate.countDown();
        }
    }

    public int runs(String ref) {
        AtomicInteger count = runs.get(ref);
        return count == null ? 0 : count.get();
    }

    public int arrivals(String ref) {
        AtomicInteger count = arrivals.get(ref);
        return count == null ? 0 : count.get();
    }

    /** Whether the last run for {@code ref} was on a virtual thread. */
    public boolean ranOnVirtualThread(String ref) {
        return virtualThreads.getOrDefault(ref, false);
    }

    void arrived(String ref) {
        arrivals.computeIfAbsent(ref, r -> new AtomicInteger()).incrementAndGet();
    }

    /** Records a run and returns its number for {@code ref} (1 for the first), after any hold. */
    int run(String ref) throws InterruptedException {
        int run = runs.computeIfAbsent(ref, r -> new AtomicInteger()).incrementAndGet();
        virtualThreads.put(ref, Thread.currentThread().isVirtual());
        CountDownLatch gate = gates.get(ref);
        if (gate != null && !gate.await(MAX_HOLD.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the test never released " + ref);
        }
        return run;
    }

    long next() {
        return sequence.incrementAndGet();
    }
}
