package dev.exactly.psp.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class SlabTest {

    private static byte[] bytes(Random random, int length) {
        byte[] b = new byte[length];
        random.nextBytes(b);
        return b;
    }

    @Test
    void recordsComeBackAsTheyWentAcrossChunksIncludingEmptyAndOversizedOnes() {
        Slab slab = new Slab();
        Random random = new Random(7);
        List<byte[]> written = new ArrayList<>();
        List<Long> handles = new ArrayList<>();
        written.add(new byte[0]);
        handles.add(slab.append(new byte[0]));
        while (slab.capacity() < 3L * Slab.CHUNK_BYTES) {
            byte[] record = bytes(random, random.nextInt(40_000));
            written.add(record);
            handles.add(slab.append(record));
        }
        byte[] oversized = bytes(random, Slab.CHUNK_BYTES + 17);
        written.add(oversized);
        handles.add(slab.append(oversized));
        byte[] after = bytes(random, 100);
        written.add(after);
        handles.add(slab.append(after));

        assertThat(new HashSet<>(handles)).hasSize(handles.size());
        for (int i = 0; i < written.size(); i++) {
            assertThat(slab.read(handles.get(i))).as("record %d", i).isEqualTo(written.get(i));
        }
        // the oversized record took a chunk of its own, the next one a new chunk
        assertThat(handles.get(handles.size() - 1) >>> 32).isEqualTo((handles.get(handles.size() - 2) >>> 32) + 1);
    }

    @Test
    void concurrentAppendsKeepEveryRecordApartAndReadableWhileOthersWrite() throws Exception {
        Slab slab = new Slab();
        int threads = 8;
        int perThread = 20_000;
        Set<Long> all = ConcurrentHashMap.newKeySet();
        CountDownLatch start = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    Random random = new Random(thread);
                    start.await();
                    int checked = 0;
                    for (int i = 0; i < perThread; i++) {
                        byte[] record = bytes(random, 1 + random.nextInt(600));
                        record[0] = (byte) thread;
                        long handle = slab.append(record);
                        assertThat(all.add(handle)).isTrue();
                        // read back at once, while the other threads fill the same chunk
                        assertThat(slab.read(handle)).isEqualTo(record);
                        checked++;
                    }
                    return checked;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> result : results) {
                total += result.get();
            }
            assertThat(total).isEqualTo(threads * perThread);
        }
        assertThat(all).hasSize(threads * perThread);
        assertThat(slab.capacity()).isGreaterThan(Slab.CHUNK_BYTES);
    }

    @Test
    void aHandleThatNamesNoRecordIsRefused() {
        Slab slab = new Slab();
        long handle = slab.append(new byte[] {1, 2, 3});
        assertThatThrownBy(() -> slab.read(handle + (1L << 32))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> slab.read(Slab.CHUNK_BYTES)).isInstanceOf(IllegalArgumentException.class);
        assertThat(slab.read(handle)).containsExactly(1, 2, 3);
    }
}
