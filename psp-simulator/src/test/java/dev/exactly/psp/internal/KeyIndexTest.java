package dev.exactly.psp.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KeyIndexTest {
    /** The keys live in a list; a value is a key's position in it. */
    private final List<String> keys = new ArrayList<>();

    private final KeyIndex index =
            new KeyIndex((value, key) -> keys.get((int) value).equals(key));

    private long add(String key) {
        keys.add(key);
        return keys.size() - 1L;
    }

    @Test
    void findsEveryKeyThroughGrowthAndCollisionsAndMissesTheOthers() {
        Map<String, Long> expected = new HashMap<>();
        // "Aa" and "BB" share String.hashCode, and so do all their concatenations: one run of slots
        List<String> colliding = new ArrayList<>(List.of(""));
        for (int round = 0; round < 8; round++) {
            List<String> next = new ArrayList<>();
            for (String s : colliding) {
                next.add(s + "Aa");
                next.add(s + "BB");
            }
            colliding = next;
        }
        int shared = colliding.getFirst().hashCode();
        assertThat(colliding).hasSize(256).allMatch(k -> k.hashCode() == shared);
        for (String key : colliding) {
            long value = add(key);
            index.put(key, value);
            expected.put(key, value);
        }
        Random random = new Random(3);
        for (int i = 0; i < 50_000; i++) {
            String key = "key-" + Long.toHexString(random.nextLong());
            long value = add(key);
            index.put(key, value);
            expected.put(key, value);
        }
        assertThat(index.size()).isEqualTo(expected.size());
        expected.forEach((key, value) -> assertThat(index.get(key)).as(key).isEqualTo(value));
        assertThat(index.get("key-none")).isEqualTo(KeyIndex.NONE);
        assertThat(index.get("AaAaAaAaAaAaAaAaBB")).isEqualTo(KeyIndex.NONE);
    }

    @Test
    void aKeyPutAgainTakesItsNewValueWithoutANewEntry() {
        long first = add("k");
        index.put("k", first);
        long second = add("k");
        index.put("k", second);
        assertThat(index.get("k")).isEqualTo(second);
        assertThat(index.size()).isEqualTo(1);
        assertThatThrownBy(() -> index.put("k", KeyIndex.NONE)).isInstanceOf(IllegalArgumentException.class);
        index.clear();
        assertThat(index.get("k")).isEqualTo(KeyIndex.NONE);
        assertThat(index.size()).isZero();
    }
}
