package dev.exactly.benchmarks.http;

import java.util.Locale;
import java.util.random.RandomGenerator;

/**
 * Where the load's keys fall in a sorted index. Clients send random keys (a version 4 UUID, as the client SDK
 * makes them and as payment APIs ask for): consecutive keys land anywhere in a B-tree, and the replay keys
 * are spread over its whole width. A key that is a phase's tag and a counter lands next to the one before
 * it: a raw table keyed by it is filled at its right edge and read in a few hot pages, a locality no client
 * gives a server and that a store which hashes its keys (the PostgreSQL store's scope key) never has.
 */
public enum KeyOrder {
    /**
     * Each key starts with eight random hex digits and a dot ({@code 3f9c01a2.h5e1-p3-1-42}), then the ordered
     * key: it falls where a random key would, and stays unique and countable by its series and number.
     */
    RANDOM("random"),
    /** {@code <tag>-<thread>-<n>}, and the replay keys {@code <run>-replay-<endpoint>-<i>}: consecutive keys adjacent. */
    ORDERED("ordered");

    private final String mode;

    KeyOrder(String mode) {
        this.mode = mode;
    }

    /** The load script's argument, and the name in {@code -Dexactly.bench.keys}. */
    String mode() {
        return mode;
    }

    /** {@code ordered} with the random prefix this order gives it. */
    String key(String ordered, RandomGenerator random) {
        return this == RANDOM ? String.format(Locale.ROOT, "%08x.", random.nextInt()) + ordered : ordered;
    }

    /** The key without its random prefix: what names it among the load's keys. */
    static String ordered(String key) {
        return key.substring(key.indexOf('.') + 1);
    }

    /** The order named {@code name} in {@code -Dexactly.bench.keys}: {@code random} or {@code ordered}. */
    static KeyOrder of(String name) {
        return switch (name) {
            case "random" -> RANDOM;
            case "ordered" -> ORDERED;
            default -> throw new IllegalArgumentException("unknown key order " + name + " (random, ordered)");
        };
    }
}
