package dev.exactly.idempotency.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;
import org.junit.jupiter.api.Test;

class IdempotencyKeysTest {

    @Test
    void aDerivedKeyIsTheDocumentedHash() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes("exactly-idempotency-key/v1".getBytes(StandardCharsets.UTF_8));
        for (String component : new String[] {"checkout", "user-42", "order-1001", "4999 usd"}) {
            bytes.write(0);
            bytes.writeBytes(component.getBytes(StandardCharsets.UTF_8));
        }
        String expected =
                HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes.toByteArray()));

        String key = IdempotencyKeys.derive("checkout", "user-42", "order-1001", "4999 usd");

        assertThat(key).isEqualTo(expected).hasSize(64).matches("[0-9a-f]{64}");
        assertThat(IdempotencyKeys.isValid(key)).isTrue();
    }

    @Test
    void theSameIntentGivesTheSameKeyAndADifferentOneADifferentKey() {
        String key = IdempotencyKeys.derive("checkout", "user-42", "order-1001");

        assertThat(IdempotencyKeys.derive("checkout", "user-42", "order-1001")).isEqualTo(key);
        Set<String> others = new HashSet<>();
        others.add(IdempotencyKeys.derive("checkout", "user-42", "order-1002"));
        others.add(IdempotencyKeys.derive("refunds", "user-42", "order-1001"));
        others.add(IdempotencyKeys.derive("checkout", "user-42order-1001"));
        others.add(IdempotencyKeys.derive("checkout", "user-4", "2order-1001"));
        others.add(IdempotencyKeys.derive("checkout", "user-42", "order-1001", "4999 usd"));
        assertThat(others).hasSize(5).doesNotContain(key);
        assertThat(IdempotencyKeys.derive("a", "bc")).isNotEqualTo(IdempotencyKeys.derive("ab", "c"));
    }

    @Test
    void componentsMustBeNonEmptyAndFreeOfNul() {
        assertThatThrownBy(() -> IdempotencyKeys.derive("checkout")).hasMessageContaining("at least one part");
        assertThatThrownBy(() -> IdempotencyKeys.derive("", "x")).hasMessageContaining("namespace");
        assertThatThrownBy(() -> IdempotencyKeys.derive("checkout", "")).hasMessageContaining("part");
        assertThatThrownBy(() -> IdempotencyKeys.derive("check\0out", "x")).hasMessageContaining("NUL");
        assertThatThrownBy(() -> IdempotencyKeys.derive("checkout", "a\0b")).hasMessageContaining("NUL");
    }

    @Test
    void mintedKeysAreValidAndDistinct() {
        Set<String> keys = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            String key = IdempotencyKeys.mint();
            assertThat(IdempotencyKeys.isValid(key)).isTrue();
            keys.add(key);
        }
        assertThat(keys).hasSize(1000);
    }

    @Test
    void validKeysArePrintableAsciiUpTo255() {
        assertThat(IdempotencyKeys.isValid("a")).isTrue();
        assertThat(IdempotencyKeys.isValid("key with/slash & space")).isTrue();
        assertThat(IdempotencyKeys.isValid("k".repeat(255))).isTrue();
        assertThat(IdempotencyKeys.isValid("k".repeat(256))).isFalse();
        assertThat(IdempotencyKeys.isValid("")).isFalse();
        assertThat(IdempotencyKeys.isValid(" lead")).isFalse();
        assertThat(IdempotencyKeys.isValid("tab\there")).isFalse();
        assertThat(IdempotencyKeys.isValid("caf\u00e9")).isFalse();
    }
}
