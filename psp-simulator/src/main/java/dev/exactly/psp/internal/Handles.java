package dev.exactly.psp.internal;

import java.util.Arrays;

/**
 * A growable list of {@link Slab} handles in one array of {@code long}s: no object per entry. Not
 * thread-safe (the book's lock guards it).
 */
final class Handles {
    private long[] handles = new long[1024];
    private int size;

    int size() {
        return size;
    }

    long get(int index) {
        check(index);
        return handles[index];
    }

    void add(long handle) {
        if (size == handles.length) {
            handles = Arrays.copyOf(handles, handles.length * 2);
        }
        handles[size++] = handle;
    }

    void set(int index, long handle) {
        check(index);
        handles[index] = handle;
    }

    void remove(int index) {
        check(index);
        System.arraycopy(handles, index + 1, handles, index, size - index - 1);
        size--;
    }

    void clear() {
        handles = new long[1024];
        size = 0;
    }

    private void check(int index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("index " + index + ", size " + size);
        }
    }
}
