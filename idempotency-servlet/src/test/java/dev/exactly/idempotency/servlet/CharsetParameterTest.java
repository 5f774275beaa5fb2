package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class CharsetParameterTest {

    @Test
    void findsTheCharsetParameterAsSplittingTheMediaTypeDoes() {
        List<String> types = List.of(
                "application/json",
                "application/json;charset=UTF-8",
                "application/json; charset=utf-8",
                "text/plain;CHARSET=\"ISO-8859-1\"",
                "text/plain; charset=",
                "text/plain; charset=\"\"",
                "text/plain;;charset=x;",
                "text/plain; q=1; charset = x",
                "text/plain; q=1;\tcharset=x ",
                "charset=x",
                ";",
                "",
                "text/plain;charset",
                "a;charset=\"x",
                "a; charsets=x",
                "a;  charset=  y  ;b=c");
        for (String type : types) {
            assertThat(CapturingResponse.charsetParameter(type)).as(type).isEqualTo(bySplitting(type));
        }
        assertThat(CapturingResponse.charsetParameter("text/plain; charset=\"utf-8\""))
                .isEqualTo("utf-8");
        assertThat(CapturingResponse.charsetParameter("application/json")).isNull();
    }

    /** The definition: the first part of {@code type.split(";")}, stripped, that starts with {@code charset=}. */
    private static @Nullable String bySplitting(String type) {
        for (String param : type.split(";", 0)) {
            String p = param.strip();
            if (p.regionMatches(true, 0, "charset=", 0, 8)) {
                String value = p.substring(8).strip();
                if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                    value = value.substring(1, value.length() - 1);
                }
                return value.isEmpty() ? null : value;
            }
        }
        return null;
    }
}
