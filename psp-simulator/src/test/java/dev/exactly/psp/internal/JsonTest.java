package dev.exactly.psp.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {

    @Test
    void parsesEveryKindOfValue() {
        JsonValue v = Json.parse(" {\"a\": [1, -2, 0, true, false, null, \"x\"], \"b\": {}, \"c\": []} ");

        assertThat(v)
                .isEqualTo(new JsonValue.Obj(Map.of(
                        "a",
                                new JsonValue.Arr(List.of(
                                        new JsonValue.Num(1),
                                        new JsonValue.Num(-2),
                                        new JsonValue.Num(0),
                                        new JsonValue.Bool(true),
                                        new JsonValue.Bool(false),
                                        JsonValue.Null.INSTANCE,
                                        new JsonValue.Str("x"))),
                        "b", new JsonValue.Obj(Map.of()),
                        "c", new JsonValue.Arr(List.of()))));
    }

    @Test
    void decodesEscapes() {
        JsonValue v = Json.parse("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00\"");

        assertThat(v).isEqualTo(new JsonValue.Str("q\" b\\ s/ \b\f\n\r\t é 😀"));
    }

    @Test
    void readsTheLongRangeExactly() {
        assertThat(Json.parse("9223372036854775807")).isEqualTo(new JsonValue.Num(Long.MAX_VALUE));
        assertThat(Json.parse("-9223372036854775808")).isEqualTo(new JsonValue.Num(Long.MIN_VALUE));
    }

    @Test
    void writesWhatItReads() {
        String text = "{\"z\":\"a\\\"b\\\\c\\n\\u0001é\",\"a\":[1,true,null,{\"k\":-5}],\"m\":{}}";

        assertThat(Json.write(Json.parse(text))).isEqualTo(text);
    }

    @Test
    void canonicalFormSortsMembersAtEveryLevel() {
        JsonValue a = Json.parse("{\"b\": 1, \"a\": {\"y\": 2, \"x\": [ {\"q\":1, \"p\":2} ]}}");
        JsonValue b = Json.parse("{\"a\": {\"x\": [{\"p\":2,\"q\":1}], \"y\": 2}, \"b\": 1}");

        assertThat(Json.writeCanonical(a))
                .isEqualTo(Json.writeCanonical(b))
                .isEqualTo("{\"a\":{\"x\":[{\"p\":2,\"q\":1}],\"y\":2},\"b\":1}");
        assertThat(Json.write(a)).isNotEqualTo(Json.write(b));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            ''                         | unexpected end of input
            '{'                        | expected a member name
            '{"a" 1}'                  | expected ':'
            '{"a":1,}'                 | expected a member name
            '[1,]'                     | unexpected character ']'
            '[1 2]'                    | expected ',' or ']'
            '{"a":1}{'                 | unexpected content after the JSON value
            '{''a'':1}'                | expected a member name
            '01'                       | leading zeros
            '-'                        | expected a digit
            '1.5'                      | only integers
            '1e3'                      | only integers
            '9223372036854775808'      | outside the 64-bit range
            '"abc'                     | unterminated string
            '"\\x"'                    | invalid escape
            '"\\u12"'                  | truncated \\u escape
            '"\\u12zz"'                | invalid hex digit
            '"\\ud800"'                | unpaired surrogate
            'tru'                      | expected true
            'nul'                      | expected null
            '{"a":1,"a":2}'            | duplicate member "a"
            '// comment'               | unexpected character '/'
            """)
    void rejectsMalformedInputWithAClearMessage(String text, String message) {
        assertThatThrownBy(() -> Json.parse(text))
                .isInstanceOf(JsonException.class)
                .hasMessageStartingWith("Malformed JSON at offset")
                .hasMessageContaining(message);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"a\tb\"", "\"a\nb\"", "\"\u0000\""})
    void rejectsUnescapedControlCharacters(String text) {
        assertThatThrownBy(() -> Json.parse(text))
                .isInstanceOf(JsonException.class)
                .hasMessageContaining("control");
    }

    @Test
    void rejectsNestingDeeperThanTheLimit() {
        String deep = "[".repeat(Json.MAX_DEPTH + 2) + "]".repeat(Json.MAX_DEPTH + 2);
        String fine = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);

        assertThatThrownBy(() -> Json.parse(deep))
                .isInstanceOf(JsonException.class)
                .hasMessageContaining("nesting");
        assertThat(Json.parse(fine)).isInstanceOf(JsonValue.Arr.class);
    }

    @Test
    void builderRejectsDuplicateMembers() {
        assertThatThrownBy(() -> JsonValue.object().put("a", 1).put("a", 2))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
