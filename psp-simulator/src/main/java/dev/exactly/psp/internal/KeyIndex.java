package dev.exactly.psp.internal;

import java.util.Arrays;

/**
 * A hash index from string keys to {@code long} values (slab handles, charge numbers) in two arrays of
 * primitives: no object per entry, so an index of millions of keys gives the collector nothing to copy
 * or scan. The keys themselves are not kept here: each value leads to a record that holds its key, and a
 * {@link Matcher} says whether the record behind a value is the key's. Open addressing with linear
 * probing, at most half full; entries are replaced, never removed ({@link #clear} forgets them all). Not
 * thread-safe.
 */
final class KeyIndex {
    /** Not a value: a free slot, and what {@link #get} returns for an unknown key. */
    static final long NONE = Long.MIN_VALUE;

    private static final int INITIAL_SLOTS = 1024;

    /** Whether the record that {@code value} leads to is {@code key}'s. */
    interface Matcher {
        boolean matches(long value, String key);
    }

    private final Matcher matcher;
    private long[] values;
    private int[] hashes;
    private int size;

    KeyIndex(Matcher matcher) {
        this.matcher = matcher;
        clear();
    }

    int size() {
        return size;
    }

    /** The value of {@code key}, or {@link #NONE}. */
    long get(String key) {
        int hash = hash(key);
        int mask = values.length - 1;
        for (int i = hash & mask; ; i = (i + 1) & mask) {
            long value = values[i];
            if (value == NONE) {
                return NONE;
            }
            if (hashes[i] == hash && matcher.matches(value, key)) {
                return value;
            }
        }
    }

    /** Sets the value of {@code key} (a value that is not {@link #NONE}), replacing any it had. */
    void put(String key, long value) {
        if (value == NONE) {
            throw new IllegalArgumentException("not a value");
        }
        if ((size + 1) * 2L > values.length) {
            grow();
        }
        int hash = hash(key);
        int mask = values.length - 1;
        for (int i = hash & mask; ; i = (i + 1) & mask) {
            long current = values[i];
            if (current == NONE) {
                values[i] = value;
                hashes[i] = hash;
                size++;
                return;
            }
            if (hashes[i] == hash && matcher.matches(current, key)) {
                values[i] = value;
                return;
            }
        }
    }

    void clear() {
        values = new long[INITIAL_SLOTS];
        Arrays.fill(values, NONE);
        hashes = new int[INITIAL_SLOTS];
        size = 0;
    }

    private void grow() {
        long[] oldValues = values;
        int[] oldHashes = hashes;
        values = new long[oldValues.length * 2];
        Arrays.fill(values, NONE);
        hashes = new int[values.length];
        int mask = values.length - 1;
        for (int j = 0; j < oldValues.length; j++) {
            if (oldValues[j] != NONE) {
                int i = oldHashes[j] & mask;
                while (values[i] != NONE) {
                    i = (i + 1) & mask;
                }
                values[i] = oldValues[j];
                hashes[i] = oldHashes[j];
            }
        }
    }

    /** The key's hash, its bits spread so that keys alike but for their ends do not crowd one run of slots. */
    static int hash(String key) {
        int h = key.hashCode() * 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
