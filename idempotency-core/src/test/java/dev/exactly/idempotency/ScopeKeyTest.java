package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ScopeKeyTest {
    private static final Pattern HEX64 = Pattern.compile("[0-9a-f]{64}");
    private static final String VALID = "0123456789abcdef".repeat(4);

    @Test
    void everyCharacterAtTheEdgesAndInTheMiddleIsJudgedAsThePatternJudgesIt() {
        int accepted = 0;
        for (int position : new int[] {0, 1, 31, 62, 63}) {
            for (int c = Character.MIN_VALUE; c <= Character.MAX_VALUE; c++) {
                String candidate = VALID.substring(0, position) + (char) c + VALID.substring(position + 1);
                boolean expected = HEX64.matcher(candidate).matches();
                if (expected) {
                    accepted++;
                    assertThat(new ScopeKey(candidate).hash()).isEqualTo(candidate);
                } else {
                    assertThatIllegalArgumentException()
                            .as("character U+%04X at %d", c, position)
                            .isThrownBy(() -> new ScopeKey(candidate));
                }
            }
        }
        assertThat(accepted).isEqualTo(5 * 16);
    }

    @Test
    void onlySixtyFourCharactersMakeAKey() {
        assertThatIllegalArgumentException().isThrownBy(() -> new ScopeKey(VALID.substring(1)));
        assertThatIllegalArgumentException().isThrownBy(() -> new ScopeKey(VALID + "0"));
        assertThatIllegalArgumentException().isThrownBy(() -> new ScopeKey(""));
        assertThatIllegalArgumentException().isThrownBy(() -> new ScopeKey(VALID.toUpperCase(java.util.Locale.ROOT)));
    }

    @Test
    void aDigestIsAKey() {
        String hash = new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("k-1"))
                .toScopeKey()
                .hash();
        assertThat(new ScopeKey(hash).hash()).isEqualTo(hash);
    }
}
