package dev.exactly.idempotency.servlet;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The little JSON this module needs: writing problem documents (every string escaped, output pure
 * ASCII) and reading one top-level string member of an application's problem document.
 */
final class Json {
    private Json() {}

    /** Whether {@code value} can be written: null, String, Boolean, Number, List or Map of those. */
    static boolean writable(@Nullable Object value) {
        return switch (value) {
            case null -> true;
            case String s -> true;
            case Boolean b -> true;
            case Integer i -> true;
            case Long l -> true;
            case Short s -> true;
            case Byte b -> true;
            case java.math.BigInteger b -> true;
            case java.math.BigDecimal b -> true;
            case Double d -> Double.isFinite(d);
            case Float f -> Float.isFinite(f);
            case List<?> list -> list.stream().allMatch(Json::writable);
            case Map<?, ?> map ->
                map.entrySet().stream().allMatch(e -> e.getKey() instanceof String && writable(e.getValue()));
            default -> false;
        };
    }

    static void write(StringBuilder out, @Nullable Object value) {
        switch (value) {
            case null -> out.append("null");
            case String s -> string(out, s);
            case Boolean b -> out.append(b);
            case Number n -> out.append(n instanceof java.math.BigDecimal d ? d.toString() : String.valueOf(n));
            case List<?> list -> {
                out.append('[');
                for (int i = 0; i < list.size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    write(out, list.get(i));
                }
                out.append(']');
            }
            case Map<?, ?> map -> {
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    if (!first) {
                        out.append(',');
                    }
                    first = false;
                    string(out, (String) e.getKey());
                    out.append(':');
                    write(out, e.getValue());
                }
                out.append('}');
            }
            default ->
                throw new IllegalArgumentException(
                        "not a JSON value: " + value.getClass().getName());
        }
    }

    /** A JSON string literal; everything outside printable ASCII and {@code " \} is {@code \}u-escaped. */
    static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /**
     * The value of a top-level string member of a JSON object, or {@code null} when the body is not a
     * JSON object or the member is absent or not a string. Lenient where it can be, never throws.
     */
    static @Nullable String topLevelString(byte[] body, String member) {
        try {
            Reader reader = new Reader(new String(body, StandardCharsets.UTF_8));
            return reader.findMember(member);
        } catch (IllegalArgumentException | IllegalStateException | IndexOutOfBoundsException malformed) {
            return null;
        }
    }

    private static final class Reader {
        private final String text;
        private int pos;

        Reader(String text) {
            this.text = text;
        }

        @Nullable
        String findMember(String member) {
            skipWhitespace();
            expect('{');
            skipWhitespace();
            if (peek() == '}') {
                return null;
            }
            while (true) {
                skipWhitespace();
                String name = readString();
                skipWhitespace();
                expect(':');
                skipWhitespace();
                if (name.equals(member)) {
                    return peek() == '"' ? readString() : null;
                }
                skipValue();
                skipWhitespace();
                char c = next();
                if (c == '}') {
                    return null;
                }
                if (c != ',') {
                    throw new IllegalStateException("expected ',' or '}'");
                }
            }
        }

        private void skipValue() {
            char c = peek();
            if (c == '"') {
                readString();
            } else if (c == '{' || c == '[') {
                int depth = 0;
                do {
                    char d = peek();
                    if (d == '"') {
                        readString();
                        continue;
                    }
                    pos++;
                    if (d == '{' || d == '[') {
                        depth++;
                    } else if (d == '}' || d == ']') {
                        depth--;
                    }
                } while (depth > 0);
            } else {
                while (pos < text.length() && ",}] \t\r\n".indexOf(text.charAt(pos)) < 0) {
                    pos++;
                }
            }
        }

        private String readString() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                        pos += 4;
                    }
                    default -> out.append(e);
                }
            }
        }

        private void skipWhitespace() {
            while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) {
                pos++;
            }
        }

        private char peek() {
            return text.charAt(pos);
        }

        private char next() {
            return text.charAt(pos++);
        }

        private void expect(char c) {
            if (next() != c) {
                throw new IllegalStateException("expected '" + c + "'");
            }
        }
    }
}
