package dev.exactly.idempotency.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SlotsTest {

    /** An entry that counts how often it was taken out. */
    private static final class Entry {
        final int id;
        final AtomicInteger taken = new AtomicInteger();

        Entry(int id) {
            this.id = id;
        }
    }

    @Test
    void aSizeIsAPowerOfTwoOfAtLeastTheProbes() {
        assertThatThrownBy(() -> new Slots<Entry>(100)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Slots<Entry>(4)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new Slots<Entry>(16).size()).isEqualTo(16);
    }

    @Test
    void entriesBeyondTheSlotsGoToTheSetAndEveryOneIsVisitedOnceWhereItIs() {
        Slots<Entry> slots = new Slots<>(16);
        Map<Entry, Integer> where = new HashMap<>();
        for (int i = 0; i < 40; i++) {
            Entry entry = new Entry(i);
            where.put(entry, slots.enter(entry));
        }
        assertThat(where.values().stream()
                        .filter(slot -> slot != Slots.OVERFLOW)
                        .distinct()
                        .count())
                .as("no two entries share a slot")
                .isEqualTo(
                        where.values().stream().filter(s -> s != Slots.OVERFLOW).count())
                .isLessThanOrEqualTo(16);
        assertThat(where.values()).contains(Slots.OVERFLOW);

        Map<Entry, Integer> visited = new HashMap<>();
        slots.forEach((slot, entry) -> assertThat(visited.put(entry, slot)).isNull());
        assertThat(visited).isEqualTo(where);

        where.forEach((entry, slot) -> {
            assertThat(slots.leave(slot, entry)).isTrue();
            assertThat(slots.leave(slot, entry)).as("out already").isFalse();
        });
        assertThat(slots.isEmpty()).isTrue();
        slots.forEach((slot, entry) -> {
            throw new AssertionError("nothing is in: " + entry.id);
        });
    }

    @Test
    void anEntryIsTakenOutOnceWhetherItsOwnerOrTheLookingThreadTakesItFirst() throws Exception {
        Slots<Entry> slots = new Slots<>(64); // fewer slots than entries at once: the set takes part
        int threads = 8;
        int perThread = 50_000;
        List<Entry> all = new ArrayList<>();
        for (int i = 0; i < threads * perThread; i++) {
            all.add(new Entry(i));
        }
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger takenByLooker = new AtomicInteger();
        Thread looker = new Thread(() -> {
            while (running.get()) {
                slots.forEach((slot, entry) -> {
                    if (entry.id % 3 == 0 && slots.leave(slot, entry)) {
                        entry.taken.incrementAndGet();
                        takenByLooker.incrementAndGet();
                    }
                });
            }
        });
        looker.start();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> owners = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t * perThread;
            Thread owner = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                List<Entry> held = new ArrayList<>();
                List<Integer> heldSlots = new ArrayList<>();
                for (int i = first; i < first + perThread; i++) {
                    Entry entry = all.get(i);
                    held.add(entry);
                    heldSlots.add(slots.enter(entry));
                    if (held.size() == 16) { // several under way per thread, as waits overlap
                        for (int k = 0; k < held.size(); k++) {
                            if (slots.leave(heldSlots.get(k), held.get(k))) {
                                held.get(k).taken.incrementAndGet();
                            }
                        }
                        held.clear();
                        heldSlots.clear();
                    }
                }
                for (int k = 0; k < held.size(); k++) {
                    if (slots.leave(heldSlots.get(k), held.get(k))) {
                        held.get(k).taken.incrementAndGet();
                    }
                }
            });
            owner.start();
            owners.add(owner);
        }
        start.countDown();
        for (Thread owner : owners) {
            owner.join();
        }
        running.set(false);
        looker.join();

        assertThat(all)
                .allSatisfy(entry ->
                        assertThat(entry.taken.get()).as("entry %d", entry.id).isEqualTo(1));
        assertThat(takenByLooker.get()).as("the looking thread took some").isPositive();
        assertThat(slots.isEmpty()).isTrue();
    }
}
