package dev.exactly.payments.charge;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class IdsTest {
    private static final String ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    @Test
    void idsAreAPrefixAnd24Base62CharactersEachEquallyLikely() {
        Ids ids = new Ids();
        assertThat(ids.charge()).matches("ch_[0-9A-Za-z]{24}");
        assertThat(ids.action()).matches("ca_[0-9A-Za-z]{24}");
        assertThat(ids.refund()).matches("re_[0-9A-Za-z]{24}");
        int n = 10_000;
        Set<String> seen = new HashSet<>();
        long[] counts = new long[ALPHABET.length()];
        for (int i = 0; i < n; i++) {
            String id = ids.charge();
            seen.add(id);
            for (int j = 3; j < id.length(); j++) {
                counts[ALPHABET.indexOf(id.charAt(j))]++;
            }
        }
        assertThat(seen).hasSize(n);
        // 240,000 characters: about 3,871 of each, with a standard deviation of about 62; a character the
        // draw favoured or skipped (the six-bit values 62 and 63) would be far outside a fifth either way
        double expected = n * 24.0 / ALPHABET.length();
        for (int c = 0; c < counts.length; c++) {
            assertThat((double) counts[c])
                    .as("count of %s", ALPHABET.charAt(c))
                    .isBetween(expected * 0.8, expected * 1.2);
        }
    }
}
