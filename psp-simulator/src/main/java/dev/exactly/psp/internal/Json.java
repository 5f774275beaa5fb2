package dev.exactly.psp.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A small, strict JSON reader and writer (RFC 8259 grammar, integers only). The reader rejects
 * anything the grammar does not allow: trailing commas, single quotes, comments, leading zeros,
 * unescaped control characters, unpaired surrogates, duplicate member names, fractions and exponents,
 * integers outside the {@code long} range, content after the value, and nesting deeper than
 * {@value #MAX_DEPTH}.
 */
public final class Json {

    /** The deepest nesting the reader accepts. */
    public static final int MAX_DEPTH = 64;

    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    /** Parses one JSON document. */
    public static JsonValue parse(String text) {
        Json reader = new Json(text);
        reader.skipWhitespace();
        JsonValue value = reader.readValue(0);
        reader.skipWhitespace();
        if (reader.pos != text.length()) {
            throw reader.error("unexpected content after the JSON value");
        }
        return value;
    }

    /** Writes a value compactly, object members in their own order. */
    public static String write(JsonValue value) {
        StringBuilder out = new StringBuilder();
        write(value, out, false);
        return out.toString();
    }

    /**
     * Writes a value compactly with object members sorted by name (at every level), so that two
     * documents that differ only in member order write identically.
     */
    public static String writeCanonical(JsonValue value) {
        StringBuilder out = new StringBuilder();
        write(value, out, true);
        return out.toString();
    }

    // ---------------------------------------------------------------- reader

    private JsonValue readValue(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nesting deeper than " + MAX_DEPTH);
        }
        if (pos >= text.length()) {
            throw error("unexpected end of input, expected a value");
        }
        char c = text.charAt(pos);
        return switch (c) {
            case '{' -> readObject(depth);
            case '[' -> readArray(depth);
            case '"' -> new JsonValue.Str(readString());
            case 't' -> literal("true", new JsonValue.Bool(true));
            case 'f' -> literal("false", new JsonValue.Bool(false));
            case 'n' -> literal("null", JsonValue.Null.INSTANCE);
            default -> {
                if (c == '-' || isDigit(c)) {
                    yield readNumber();
                }
                throw error("unexpected character " + describe(c) + ", expected a value");
            }
        };
    }

    private JsonValue.Obj readObject(int depth) {
        pos++; // '{'
        Map<String, JsonValue> members = new LinkedHashMap<>();
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            return new JsonValue.Obj(members);
        }
        while (true) {
            skipWhitespace();
            if (peek() != '"') {
                throw error("expected a member name in double quotes");
            }
            int namePos = pos;
            String name = readString();
            skipWhitespace();
            expect(':');
            skipWhitespace();
            JsonValue value = readValue(depth + 1);
            if (members.putIfAbsent(name, value) != null) {
                throw new JsonException("Malformed JSON at offset " + namePos + ": duplicate member \"" + name + "\"");
            }
            skipWhitespace();
            char c = next("',' or '}'");
            if (c == '}') {
                return new JsonValue.Obj(members);
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or '}' but found " + describe(c));
            }
        }
    }

    private JsonValue.Arr readArray(int depth) {
        pos++; // '['
        List<JsonValue> elements = new ArrayList<>();
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            return new JsonValue.Arr(elements);
        }
        while (true) {
            skipWhitespace();
            elements.add(readValue(depth + 1));
            skipWhitespace();
            char c = next("',' or ']'");
            if (c == ']') {
                return new JsonValue.Arr(elements);
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or ']' but found " + describe(c));
            }
        }
    }

    private String readString() {
        pos++; // opening quote
        StringBuilder out = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                break;
            }
            if (c < 0x20) {
                pos--;
                throw error("unescaped control character " + describe(c) + " in string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = next("an escape character");
            switch (e) {
                case '"' -> out.append('"');
                case '\\' -> out.append('\\');
                case '/' -> out.append('/');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> out.append(readHex4());
                default -> {
                    pos--;
                    throw error("invalid escape \\" + e);
                }
            }
        }
        String s = out.toString();
        checkSurrogates(s);
        return s;
    }

    private char readHex4() {
        if (pos + 4 > text.length()) {
            throw error("truncated \\u escape");
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
            int d = Character.digit(text.charAt(pos + i), 16);
            if (d < 0) {
                throw error("invalid hex digit in \\u escape");
            }
            v = (v << 4) | d;
        }
        pos += 4;
        return (char) v;
    }

    private void checkSurrogates(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw error("unpaired surrogate in string");
            }
            if (Character.isLowSurrogate(c)) {
                throw error("unpaired surrogate in string");
            }
        }
    }

    private JsonValue.Num readNumber() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        if (pos >= text.length() || !isDigit(text.charAt(pos))) {
            throw error("expected a digit");
        }
        if (text.charAt(pos) == '0' && pos + 1 < text.length() && isDigit(text.charAt(pos + 1))) {
            throw error("leading zeros are not allowed");
        }
        while (pos < text.length() && isDigit(text.charAt(pos))) {
            pos++;
        }
        if (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == '.' || c == 'e' || c == 'E') {
                throw error("only integers are supported (no fraction or exponent)");
            }
        }
        String digits = text.substring(start, pos);
        try {
            return new JsonValue.Num(Long.parseLong(digits));
        } catch (NumberFormatException e) {
            pos = start;
            throw error("integer " + digits + " is outside the 64-bit range");
        }
    }

    private JsonValue literal(String word, JsonValue value) {
        if (!text.startsWith(word, pos)) {
            throw error("invalid literal, expected " + word);
        }
        pos += word.length();
        return value;
    }

    private void skipWhitespace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private char next(String expected) {
        if (pos >= text.length()) {
            throw error("unexpected end of input, expected " + expected);
        }
        return text.charAt(pos++);
    }

    private void expect(char c) {
        char actual = next("'" + c + "'");
        if (actual != c) {
            pos--;
            throw error("expected '" + c + "' but found " + describe(actual));
        }
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static String describe(char c) {
        return c < 0x20 || c > 0x7e ? String.format("U+%04X", (int) c) : "'" + c + "'";
    }

    private JsonException error(String message) {
        return new JsonException("Malformed JSON at offset " + pos + ": " + message);
    }

    // ---------------------------------------------------------------- writer

    private static void write(JsonValue value, StringBuilder out, boolean sorted) {
        switch (value) {
            case JsonValue.Obj obj -> {
                Map<String, JsonValue> members = sorted ? new TreeMap<>(obj.members()) : obj.members();
                out.append('{');
                boolean first = true;
                for (Map.Entry<String, JsonValue> m : members.entrySet()) {
                    if (!first) {
                        out.append(',');
                    }
                    first = false;
                    writeString(m.getKey(), out);
                    out.append(':');
                    write(m.getValue(), out, sorted);
                }
                out.append('}');
            }
            case JsonValue.Arr arr -> {
                out.append('[');
                for (int i = 0; i < arr.elements().size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    write(arr.elements().get(i), out, sorted);
                }
                out.append(']');
            }
            case JsonValue.Str s -> writeString(s.value(), out);
            case JsonValue.Num n -> out.append(n.value());
            case JsonValue.Bool b -> out.append(b.value());
            case JsonValue.Null n -> out.append("null");
        }
    }

    private static void writeString(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
