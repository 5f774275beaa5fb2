package dev.exactly.idempotency.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * Entries under way (statements, commands waited for) that one background thread looks over now and then for
 * those past their deadline. An entry takes a free slot of an array with one compare-and-set and gives it back
 * with another; the few that find no free slot among their probes go to a concurrent set. A concurrent set for
 * all of them cost an entry about half a microsecond of CPU to enter and leave (its bin's lock, a node, the shared
 * count, under the contention of every carrier thread), and a lock-free stack that the looking thread drained cost
 * that thread a walk over every entry since its last look; here the looking thread reads the array, whatever the
 * rate of entries. Thread-safe.
 *
 * @param <T> the entries; the set that holds the overflow compares them by {@code equals}
 */
public final class Slots<T> {
    /** What {@link #enter} returns for an entry that went to the set. */
    public static final int OVERFLOW = -1;
    /** Slots an entry tries, from a random one, before it goes to the set. */
    private static final int PROBES = 8;

    private final AtomicReferenceArray<@Nullable T> slots;
    private final int mask;
    private final Set<T> overflow = ConcurrentHashMap.newKeySet();

    /** {@code size} slots: a power of two, more than the entries ever under way at once. */
    public Slots(int size) {
        if (size < PROBES || Integer.bitCount(size) != 1) {
            throw new IllegalArgumentException("slots: a power of two, at least " + PROBES);
        }
        this.slots = new AtomicReferenceArray<>(size);
        this.mask = size - 1;
    }

    /** Puts {@code entry} in a free slot and returns it, or in the set and returns {@link #OVERFLOW}. */
    public int enter(T entry) {
        int first = ThreadLocalRandom.current().nextInt() & mask;
        for (int i = 0; i < PROBES; i++) {
            int slot = (first + i) & mask;
            if (slots.get(slot) == null && slots.compareAndSet(slot, null, entry)) {
                return slot;
            }
        }
        overflow.add(entry);
        return OVERFLOW;
    }

    /**
     * Takes {@code entry} out of {@code slot} (as {@link #enter} or {@link #forEach} gave it); false if it was out
     * already. Either side may take it out, and only one of them does.
     */
    public boolean leave(int slot, T entry) {
        return slot == OVERFLOW ? overflow.remove(entry) : slots.compareAndSet(slot, entry, null);
    }

    /** Calls {@code visitor} with every entry in, and its slot; entries entering or leaving meanwhile may be missed. */
    public void forEach(Visitor<? super T> visitor) {
        for (int slot = 0; slot <= mask; slot++) {
            T entry = slots.get(slot);
            if (entry != null) {
                visitor.visit(slot, entry);
            }
        }
        for (T entry : overflow) {
            visitor.visit(OVERFLOW, entry);
        }
    }

    /** Whether no entry is in. */
    public boolean isEmpty() {
        if (!overflow.isEmpty()) {
            return false;
        }
        for (int slot = 0; slot <= mask; slot++) {
            if (slots.get(slot) != null) {
                return false;
            }
        }
        return true;
    }

    /** The number of slots. */
    public int size() {
        return mask + 1;
    }

    /** An entry and its slot. */
    @FunctionalInterface
    public interface Visitor<T> {
        void visit(int slot, T entry);
    }
}
