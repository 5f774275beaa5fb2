package dev.exactly.benchmarks.http;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the executions of one endpoint's handler, notes every key it ran, and, where a key must run at most
 * once, finds any key that ran twice. The load script's keys are {@code <series>-<n>} (a phase's tag and client thread, then a
 * counter; or a run's replay keys and their index), after the random prefix of {@link KeyOrder#RANDOM},
 * kept as one bit per key and series, so that millions of fresh keys cost little memory. Thread-safe.
 */
final class Executions {
    private static final int MAX_SAMPLES = 10;

    private final boolean oncePerKey;
    private final ConcurrentHashMap<String, Series> series = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final LongAdder duplicates = new LongAdder();
    private final List<String> samples = new ArrayList<>();

    /** @param oncePerKey whether a second execution of a key is a failure */
    Executions(boolean oncePerKey) {
        this.oncePerKey = oncePerKey;
    }

    /**
     * Records one execution of {@code key}; returns its number (1, 2, ...), which names the charge. Every
     * endpoint's handler keeps the same books, so that their cost is the same on both sides of a ratio: the
     * unguarded endpoint's too, where a key's second execution is no failure (it runs every replay).
     */
    long record(String key) {
        if (!firstRun(key) && oncePerKey) {
            duplicates.increment();
            synchronized (samples) {
                if (samples.size() < MAX_SAMPLES) {
                    samples.add(key);
                }
            }
        }
        return ids.incrementAndGet();
    }

    private boolean firstRun(String sent) {
        String key = KeyOrder.ordered(sent);
        int dash = key.lastIndexOf('-');
        String name = key;
        int index = 0;
        if (dash > 0 && dash < key.length() - 1) {
            try {
                index = Integer.parseInt(key, dash + 1, key.length(), 10);
                name = key.substring(0, dash);
            } catch (NumberFormatException notCounted) {
                index = 0;
            }
        }
        if (index < 0) {
            name = key;
            index = 0;
        }
        return series.computeIfAbsent(name, s -> new Series()).add(index);
    }

    /** Executions so far. */
    long count() {
        return ids.get();
    }

    /** Keys that ran more than once, where that is a failure. */
    long duplicates() {
        return duplicates.sum();
    }

    /** The first few keys that ran twice. */
    List<String> duplicateSamples() {
        synchronized (samples) {
            return List.copyOf(samples);
        }
    }

    /** The keys of one series seen so far, one bit each. */
    private static final class Series {
        private final BitSet seen = new BitSet();

        synchronized boolean add(int index) {
            if (seen.get(index)) {
                return false;
            }
            seen.set(index);
            return true;
        }
    }
}
