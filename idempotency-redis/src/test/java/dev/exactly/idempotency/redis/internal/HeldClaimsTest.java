package dev.exactly.idempotency.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.OwnerToken;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class HeldClaimsTest {
    private static final byte[] KEY = bytes("p{a}:r");
    private static final byte[] OTHER_KEY = bytes("p{b}:r");

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void aClaimIsTakenOnceAndOnlyForItsOwnKey() {
        HeldClaims held = new HeldClaims();
        OwnerToken owner = OwnerToken.random();
        byte[] value = bytes("2P...");
        held.hold(owner, KEY, value);
        assertThat(held.take(OwnerToken.random(), KEY)).as("another owner").isNull();
        assertThat(held.take(owner, KEY.clone())).isSameAs(value);
        assertThat(held.take(owner, KEY)).as("taken once").isNull();

        held.hold(owner, KEY, value);
        assertThat(held.take(owner, OTHER_KEY))
                .as("the owner named with another key")
                .isNull();
        assertThat(held.take(owner, KEY))
                .as("and forgotten: the completion goes the other way")
                .isNull();
        assertThat(held.size()).isZero();
    }

    @Test
    void aFullTableStartsOverSoThatClaimsNeverCompletedCannotFillIt() {
        HeldClaims held = new HeldClaims(3);
        List<OwnerToken> owners = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            OwnerToken owner = OwnerToken.random();
            owners.add(owner);
            held.hold(owner, KEY, bytes("v" + i));
        }
        assertThat(held.size()).isEqualTo(3);
        OwnerToken fourth = OwnerToken.random();
        held.hold(fourth, KEY, bytes("v3"));
        assertThat(held.size()).isEqualTo(1);
        assertThat(held.take(owners.get(0), KEY)).isNull();
        assertThat(held.take(fourth, KEY)).isEqualTo(bytes("v3"));
        assertThatThrownBy(() -> new HeldClaims(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    // the very array a thread held, not an equal one, is what its own take must return
    @SuppressWarnings("ReferenceEquality")
    void concurrentClaimsOfManyThreadsAreEachTakenByTheirOwnCompletion() throws Exception {
        HeldClaims held = new HeldClaims();
        int threads = 8;
        int each = 2_000;
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<Integer>> taken = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                taken.add(pool.submit(() -> {
                    int mine = 0;
                    for (int i = 0; i < each; i++) {
                        OwnerToken owner = OwnerToken.random();
                        byte[] value = bytes(thread + "-" + i);
                        held.hold(owner, KEY, value);
                        if (held.take(owner, KEY) == value) {
                            mine++;
                        }
                    }
                    return mine;
                }));
            }
            for (Future<Integer> count : taken) {
                assertThat(count.get()).isEqualTo(each);
            }
        }
        assertThat(held.size()).isZero();
    }
}
