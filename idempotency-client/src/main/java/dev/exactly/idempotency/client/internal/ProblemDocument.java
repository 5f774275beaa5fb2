package dev.exactly.idempotency.client.internal;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Reads the top-level string members of a JSON object (an RFC 9457 problem document: {@code type},
 * {@code code}, ...) without a JSON library. Nested values are skipped; anything that is not a well-formed
 * object yields no members. Bounded: only the first 64 KiB are read.
 */
public final class ProblemDocument {
    private static final int LIMIT = 64 * 1024;

    private final Map<String, String> members;

    private ProblemDocument(Map<String, String> members) {
        this.members = members;
    }

    /** The document in {@code body} (UTF-8); empty members when it is not a JSON object. */
    public static ProblemDocument parse(byte[] body) {
        String text = new String(body, 0, Math.min(body.length, LIMIT), StandardCharsets.UTF_8);
        Map<String, String> found = new HashMap<>();
        try {
            new Scanner(text, found).object();
        } catch (IllegalArgumentException | IndexOutOfBoundsException malformed) {
            return new ProblemDocument(Map.of());
        }
        return new ProblemDocument(Map.copyOf(found));
    }

    /** A top-level string member. */
    public Optional<String> string(String name) {
        return Optional.ofNullable(members.get(name));
    }

    private static final class Scanner {
        private final String s;
        private final Map<String, String> out;
        private int i;

        Scanner(String s, Map<String, String> out) {
            this.s = s;
            this.out = out;
        }

        void object() {
            ws();
            expect('{');
            ws();
            if (peek() == '}') {
                return;
            }
            while (true) {
                ws();
                String name = string();
                ws();
                expect(':');
                ws();
                if (peek() == '"') {
                    out.putIfAbsent(name, string());
                } else {
                    skipValue(0);
                }
                ws();
                char c = s.charAt(i++);
                if (c == '}') {
                    return;
                }
                if (c != ',') {
                    throw new IllegalArgumentException("expected , or }");
                }
            }
        }

        private void skipValue(int depth) {
            if (depth > 64) {
                throw new IllegalArgumentException("too deep");
            }
            char c = peek();
            switch (c) {
                case '"' -> string();
                case '{', '[' -> {
                    char close = c == '{' ? '}' : ']';
                    i++;
                    ws();
                    if (peek() == close) {
                        i++;
                        return;
                    }
                    while (true) {
                        ws();
                        if (close == '}') {
                            string();
                            ws();
                            expect(':');
                            ws();
                        }
                        skipValue(depth + 1);
                        ws();
                        char next = s.charAt(i++);
                        if (next == close) {
                            return;
                        }
                        if (next != ',') {
                            throw new IllegalArgumentException("expected , or " + close);
                        }
                    }
                }
                default -> {
                    int start = i;
                    while (i < s.length() && "{}[],: \t\r\n\"".indexOf(s.charAt(i)) < 0) {
                        i++;
                    }
                    if (i == start) {
                        throw new IllegalArgumentException("expected a value");
                    }
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case '"', '\\', '/' -> b.append(e);
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> throw new IllegalArgumentException("bad escape");
                }
            }
        }

        private char peek() {
            return s.charAt(i);
        }

        private void expect(char c) {
            if (s.charAt(i++) != c) {
                throw new IllegalArgumentException("expected " + c);
            }
        }

        private void ws() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }
    }
}
