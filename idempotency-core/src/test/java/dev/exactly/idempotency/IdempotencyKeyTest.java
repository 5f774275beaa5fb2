package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.InvalidIdempotencyKeyException.Reason;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdempotencyKeyTest {

    @Test
    void quotedAndBareNameTheSameKey() {
        assertThat(IdempotencyKey.parse("\"abc-123\"")).isEqualTo(IdempotencyKey.parse("abc-123"));
        assertThat(IdempotencyKey.parse("  abc-123\t")).isEqualTo(new IdempotencyKey("abc-123"));
        assertThat(IdempotencyKey.parse("\"a \\\"quoted\\\" \\\\ key\"").value())
                .isEqualTo("a \"quoted\" \\ key");
    }

    @Test
    void lengthBounds() {
        assertThat(IdempotencyKey.parse("x".repeat(255)).value()).hasSize(255);
        assertThat(IdempotencyKey.parse("\"" + "x".repeat(255) + "\"").value()).hasSize(255);
        assertReason("x".repeat(256), Reason.TOO_LONG);
        assertReason("", Reason.EMPTY);
        assertReason("   ", Reason.EMPTY);
        assertReason("\"\"", Reason.EMPTY);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "caf\u00e9",
                "tab\tinside",
                "new\nline",
                "\"unterminated",
                "\"a\"b",
                "\"bad\\escape\"",
                "\"a\\\"",
                "nul\u0000"
            })
    void illegalCharactersAndBrokenQuoting(String header) {
        assertThatThrownBy(() -> IdempotencyKey.parse(header))
                .isInstanceOfSatisfying(
                        InvalidIdempotencyKeyException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.ILLEGAL_CHARACTER));
    }

    @Test
    void missing() {
        assertReason(null, Reason.MISSING);
        assertThatThrownBy(() -> IdempotencyKey.parse(List.of()))
                .isInstanceOfSatisfying(InvalidIdempotencyKeyException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.MISSING);
                    assertThat(e.code()).isEqualTo("idempotency_key_missing");
                });
    }

    @Test
    void repeatedHeadersMustAgree() {
        assertThat(IdempotencyKey.parse(List.of("k1", "\"k1\""))).isEqualTo(new IdempotencyKey("k1"));
        assertThatThrownBy(() -> IdempotencyKey.parse(List.of("k1", "k2")))
                .isInstanceOfSatisfying(
                        InvalidIdempotencyKeyException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.AMBIGUOUS));
    }

    @Test
    void aHeaderSentTwiceAndJoinedIntoOneLineNamesTheSameKey() {
        // an intermediary may join two header lines into one, comma-separated: the key must not change
        for (String joined : List.of("k1, k1", "k1,k1", "\"k1\", k1", "k1 ,\t\"k1\"", "k1,", ", k1")) {
            assertThat(IdempotencyKey.parse(joined)).as(joined).isEqualTo(new IdempotencyKey("k1"));
        }
        assertThat(IdempotencyKey.parse(List.of("k1", "k1, k1"))).isEqualTo(new IdempotencyKey("k1"));
        assertThat(IdempotencyKey.parse("\"a,b\"").value())
                .as("a quoted comma is the key's")
                .isEqualTo("a,b");
        assertThat(IdempotencyKey.parse("\"a,b\", \"a,b\"").value()).isEqualTo("a,b");
        for (String several : List.of("k1, k2", "k1,\"k2\"", "\"a,b\", a")) {
            assertThatThrownBy(() -> IdempotencyKey.parse(several))
                    .as(several)
                    .isInstanceOfSatisfying(
                            InvalidIdempotencyKeyException.class,
                            e -> assertThat(e.reason()).isEqualTo(Reason.AMBIGUOUS));
        }
        assertReason(",", Reason.EMPTY);
        assertReason(" , ", Reason.EMPTY);
    }

    @Test
    void toStringHidesTheKey() {
        assertThat(new IdempotencyKey("secret-order-42").toString()).doesNotContain("secret");
    }

    private static void assertReason(String header, Reason reason) {
        assertThatThrownBy(() -> IdempotencyKey.parse(header))
                .isInstanceOfSatisfying(InvalidIdempotencyKeyException.class, e -> {
                    assertThat(e.reason()).isEqualTo(reason);
                    assertThat(e.getStackTrace()).isEmpty();
                });
    }
}
