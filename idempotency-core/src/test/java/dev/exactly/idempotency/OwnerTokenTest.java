package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class OwnerTokenTest {
    private static final int THREADS = 16;
    /** More than one keystream block (64 tokens) per thread, so that every stripe refills many times. */
    private static final int PER_THREAD = 5_000;

    @Test
    void aTokenIsThirtyTwoLowerCaseHexDigits() {
        for (int i = 0; i < 1_000; i++) {
            assertThat(OwnerToken.random().value()).matches("[0-9a-f]{32}");
        }
    }

    @Test
    void tokensDrawnAtOnceByManyThreadsOnEveryStripeNeverRepeat() throws Exception {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<List<String>>> drawn = new ArrayList<>();
        // platform threads with consecutive ids cover every stripe; virtual threads as the server runs them
        try (ExecutorService platform = Executors.newFixedThreadPool(THREADS);
                ExecutorService virtual = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < THREADS; t++) {
                ExecutorService on = t % 2 == 0 ? platform : virtual;
                drawn.add(on.submit(() -> {
                    start.await();
                    List<String> mine = new ArrayList<>(PER_THREAD);
                    for (int i = 0; i < PER_THREAD; i++) {
                        mine.add(OwnerToken.random().value());
                    }
                    return mine;
                }));
            }
            start.countDown();
            for (Future<List<String>> thread : drawn) {
                List<String> mine = thread.get();
                assertThat(mine).hasSize(PER_THREAD);
                seen.addAll(mine);
            }
        }
        assertThat(seen).as("every token drawn is distinct").hasSize(THREADS * PER_THREAD);
    }

    @Test
    void theTokensBitsAreBalanced() {
        // 200,000 tokens: each of the 128 bit positions set in about half of them (a stuck or zero keystream,
        // or a block handed out twice, would show far outside six standard deviations, about 1,342)
        int tokens = 200_000;
        int[] ones = new int[128];
        HexFormat hex = HexFormat.of();
        Set<String> firstBytes = new HashSet<>();
        for (int i = 0; i < tokens; i++) {
            byte[] bytes = hex.parseHex(OwnerToken.random().value());
            firstBytes.add(Integer.toString(bytes[0] & 0xff));
            for (int bit = 0; bit < 128; bit++) {
                if ((bytes[bit >>> 3] >>> (bit & 7) & 1) == 1) {
                    ones[bit]++;
                }
            }
        }
        for (int bit = 0; bit < 128; bit++) {
            assertThat(ones[bit]).as("tokens with bit %d set", bit).isBetween(tokens / 2 - 1_342, tokens / 2 + 1_342);
        }
        assertThat(firstBytes).as("every value of the first byte occurs").hasSize(256);
    }

    @Test
    void aTokenIsOneToSixtyFourCharacters() {
        assertThat(new OwnerToken("a").value()).isEqualTo("a");
        assertThat(new OwnerToken("x".repeat(64)).toString()).hasSize(64);
        assertThatThrownBy(() -> new OwnerToken("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OwnerToken("x".repeat(65))).isInstanceOf(IllegalArgumentException.class);
    }
}
