package dev.exactly.idempotency;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The RFC 8785 canonical form of a JSON document, written in one pass without building a tree: an object or
 * array at the top, holding strings, numbers, {@code true}, {@code false}, {@code null}, objects and arrays. A
 * document this class does not canonicalise is answered {@code null} and fingerprinted by its bytes: text
 * that is not JSON by RFC 8259's grammar, a scalar at the top, a duplicate member name, a lone surrogate
 * (UTF-8 cannot carry one), and a number whose double does not stand for it ({@link JsonNumbers#roundTrips}).
 *
 * <p>The rules applied: no whitespace; object members sorted by their names' UTF-16 code units; strings
 * written as ECMAScript's {@code JSON.stringify} writes them ({@code \"}, {@code \\}, {@code \b}, {@code \f},
 * {@code \n}, {@code \r}, {@code \t}, other control characters as {@code \}{@code u00xx}, everything else as
 * itself); numbers as ECMAScript writes their doubles ({@link JsonNumbers}), an integer of at most 15
 * digits as itself ({@code -0} as {@code 0}). Arrays and objects nested deeper than the limit stop the parse
 * at once ({@link #tooDeep()}), so no input can exhaust the stack.
 */
final class CanonicalJson {
    private final String text;
    private final int maxDepth;
    private int pos;
    private int depth;
    private boolean tooDeep;

    /** A parser of one document, refusing arrays and objects nested deeper than {@code maxDepth}. */
    CanonicalJson(String text, int maxDepth) {
        this.text = text;
        this.maxDepth = maxDepth;
    }

    /** The canonical text, or {@code null} when the document is not of the handled kind or nests too deep. */
    @Nullable
    String canonicalise() {
        StringBuilder out = new StringBuilder(text.length());
        skipWhitespace();
        char first = peek();
        if (first != '{' && first != '[') {
            return null;
        }
        if (!value(out)) {
            return null;
        }
        skipWhitespace();
        return pos == text.length() ? out.toString() : null;
    }

    /** Whether the parse stopped at nesting deeper than the limit (its arrays and objects, outside strings). */
    boolean tooDeep() {
        return tooDeep;
    }

    private boolean enter() {
        if (++depth > maxDepth) {
            tooDeep = true;
            return false;
        }
        return true;
    }

    private boolean value(StringBuilder out) {
        skipWhitespace();
        char c = peek();
        return switch (c) {
            case '{' -> object(out);
            case '[' -> array(out);
            case '"' -> string(out);
            case 't' -> literal(out, "true");
            case 'f' -> literal(out, "false");
            case 'n' -> literal(out, "null");
            default -> (c == '-' || (c >= '0' && c <= '9')) && number(out);
        };
    }

    private boolean object(StringBuilder out) {
        pos++; // {
        if (!enter()) {
            return false;
        }
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            depth--;
            out.append("{}");
            return true;
        }
        List<Member> members = new ArrayList<>();
        while (true) {
            skipWhitespace();
            if (peek() != '"') {
                return false;
            }
            int nameStart = pos + 1;
            int nameEnd = plainEnd();
            String name = nameEnd >= 0 ? text.substring(nameStart, nameEnd) : null;
            if (name == null) {
                StringBuilder decoded = new StringBuilder();
                if (!decodeString(decoded)) {
                    return false;
                }
                name = decoded.toString();
            }
            skipWhitespace();
            if (peek() != ':') {
                return false;
            }
            pos++;
            StringBuilder member = new StringBuilder();
            if (!value(member)) {
                return false;
            }
            members.add(new Member(name, member));
            skipWhitespace();
            char next = peek();
            pos++;
            if (next == '}') {
                break;
            }
            if (next != ',') {
                return false;
            }
        }
        members.sort(null);
        out.append('{');
        for (int i = 0; i < members.size(); i++) {
            Member member = members.get(i);
            if (i > 0) {
                if (member.name.equals(members.get(i - 1).name)) {
                    return false; // a duplicate name: RFC 8785 has no canonical form for it
                }
                out.append(',');
            }
            writeString(out, member.name);
            out.append(':').append(member.value);
        }
        out.append('}');
        depth--;
        return true;
    }

    private boolean array(StringBuilder out) {
        pos++; // [
        if (!enter()) {
            return false;
        }
        out.append('[');
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            depth--;
            out.append(']');
            return true;
        }
        boolean first = true;
        while (true) {
            if (!first) {
                out.append(',');
            }
            first = false;
            if (!value(out)) {
                return false;
            }
            skipWhitespace();
            char next = peek();
            pos++;
            if (next == ']') {
                out.append(']');
                depth--;
                return true;
            }
            if (next != ',') {
                return false;
            }
        }
    }

    private boolean string(StringBuilder out) {
        int start = pos;
        if (plainEnd() >= 0) {
            out.append(text, start, pos); // written as it was sent: nothing in it is escaped either way
            return true;
        }
        StringBuilder decoded = new StringBuilder();
        if (!decodeString(decoded)) {
            return false;
        }
        writeString(out, decoded);
        return true;
    }

    /**
     * Where the string literal at {@code pos} ends (its closing quote) if it holds no escape, no control
     * character and no unpaired surrogate, moving past it: then its canonical form is the literal itself.
     * Otherwise -1, {@code pos} unchanged.
     */
    private int plainEnd() {
        int n = text.length();
        for (int i = pos + 1; i < n; i++) {
            char c = text.charAt(i);
            if (c == '"') {
                if (!wellFormed(text.subSequence(pos + 1, i))) {
                    return -1;
                }
                pos = i + 1;
                return i;
            }
            if (c == '\\' || c < 0x20) {
                return -1;
            }
        }
        return -1;
    }

    /** Reads a string literal at {@code pos} into its characters; false if malformed or holding a lone surrogate. */
    private boolean decodeString(StringBuilder into) {
        pos++; // opening quote
        int n = text.length();
        while (pos < n) {
            char c = text.charAt(pos++);
            if (c == '"') {
                return wellFormed(into);
            }
            if (c < 0x20) {
                return false; // raw control characters are not JSON
            }
            if (c != '\\') {
                into.append(c);
                continue;
            }
            if (pos >= n) {
                return false;
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"', '\\', '/' -> into.append(e);
                case 'b' -> into.append('\b');
                case 'f' -> into.append('\f');
                case 'n' -> into.append('\n');
                case 'r' -> into.append('\r');
                case 't' -> into.append('\t');
                case 'u' -> {
                    if (pos + 4 > n) {
                        return false;
                    }
                    int code = 0;
                    for (int k = 0; k < 4; k++) {
                        int digit = Character.digit(text.charAt(pos++), 16);
                        if (digit < 0) {
                            return false;
                        }
                        code = code * 16 + digit;
                    }
                    into.append((char) code);
                }
                default -> {
                    return false;
                }
            }
        }
        return false; // unterminated
    }

    /** No unpaired surrogate: UTF-8 has no encoding for one. */
    private static boolean wellFormed(CharSequence s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= n || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    private static void writeString(StringBuilder out, CharSequence s) {
        out.append('"');
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append("\\u00")
                                .append(Character.forDigit(c >> 4, 16))
                                .append(Character.forDigit(c & 0xf, 16));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /**
     * A number literal by JSON's grammar (no leading zero, no plus sign, digits on both sides of a point). An
     * integer of 1-15 digits is written as it is ({@code -0} as {@code 0}): a double holds it exactly and
     * ECMAScript prints it in plain digits. Any other is written as ECMAScript writes its double, if it
     * {@linkplain JsonNumbers#roundTrips reads as one that stands for the same number}; if not, the document
     * is not canonicalised.
     */
    private boolean number(StringBuilder out) {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        int integerStart = pos;
        if (peek() == '0') {
            pos++;
        } else if (!digits()) {
            return false;
        }
        int integerDigits = pos - integerStart;
        boolean integral = true;
        if (peek() == '.') {
            pos++;
            integral = false;
            if (!digits()) {
                return false;
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            pos++;
            integral = false;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            if (!digits()) {
                return false;
            }
        }
        if (integral && integerDigits <= 15) {
            if (integerDigits == 1 && text.charAt(integerStart) == '0') {
                out.append('0'); // -0 prints as 0
            } else {
                out.append(text, start, pos);
            }
            return true;
        }
        if (JsonNumbers.appendShort(out, text, start, pos)) {
            return true;
        }
        String literal = text.substring(start, pos);
        if (!JsonNumbers.roundTrips(literal)) {
            return false;
        }
        JsonNumbers.appendEcmaScript(out, Double.parseDouble(literal));
        return true;
    }

    /** Moves past one or more decimal digits; false if there is none. */
    private boolean digits() {
        int first = pos;
        while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
            pos++;
        }
        return pos > first;
    }

    private boolean literal(StringBuilder out, String word) {
        if (!text.startsWith(word, pos)) {
            return false;
        }
        pos += word.length();
        out.append(word);
        return true;
    }

    private void skipWhitespace() {
        int n = text.length();
        while (pos < n) {
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

    /**
     * Whether {@code json} is already its own canonical form, checked on the bytes without building
     * anything: ASCII only, an object or array at the top (nested at most {@code maxDepth} deep), no
     * whitespace, member names without escapes in strictly increasing order, strings without escapes or
     * control characters, integers of at most 15 digits as {@link #number} writes them (no {@code -0}),
     * and the literals. Such a document is exactly what {@link #canonicalise()} would write for it, so its
     * bytes are the canonical bytes; for anything else (which may still be canonical) the answer is false
     * and the document goes the usual way.
     */
    static boolean alreadyCanonical(byte[] json, int maxDepth) {
        if (json.length < 2 || (json[0] != '{' && json[0] != '[')) {
            return false;
        }
        Compact check = new Compact(json, maxDepth);
        return check.value() && check.pos == json.length;
    }

    /** The byte-level check of {@link #alreadyCanonical}. */
    private static final class Compact {
        private final byte[] json;
        private final int maxDepth;
        private int pos;
        private int depth;

        Compact(byte[] json, int maxDepth) {
            this.json = json;
            this.maxDepth = maxDepth;
        }

        boolean value() {
            if (pos >= json.length) {
                return false;
            }
            byte c = json[pos];
            return switch (c) {
                case '{' -> object();
                case '[' -> array();
                case '"' -> string() >= 0;
                case 't' -> literal("true");
                case 'f' -> literal("false");
                case 'n' -> literal("null");
                default -> (c == '-' || (c >= '0' && c <= '9')) && integer();
            };
        }

        private boolean object() {
            if (++depth > maxDepth) {
                return false;
            }
            pos++; // {
            if (pos < json.length && json[pos] == '}') {
                pos++;
                depth--;
                return true;
            }
            int previousStart = -1;
            int previousEnd = -1;
            while (true) {
                if (pos >= json.length || json[pos] != '"') {
                    return false;
                }
                int start = pos + 1;
                int end = string();
                if (end < 0
                        || (previousStart >= 0
                                && Arrays.compare(json, previousStart, previousEnd, json, start, end) >= 0)) {
                    return false; // not in order, or a duplicate name
                }
                previousStart = start;
                previousEnd = end;
                if (pos >= json.length || json[pos] != ':') {
                    return false;
                }
                pos++;
                if (!value() || pos >= json.length) {
                    return false;
                }
                byte next = json[pos++];
                if (next == '}') {
                    depth--;
                    return true;
                }
                if (next != ',') {
                    return false;
                }
            }
        }

        private boolean array() {
            if (++depth > maxDepth) {
                return false;
            }
            pos++; // [
            if (pos < json.length && json[pos] == ']') {
                pos++;
                depth--;
                return true;
            }
            while (true) {
                if (!value() || pos >= json.length) {
                    return false;
                }
                byte next = json[pos++];
                if (next == ']') {
                    depth--;
                    return true;
                }
                if (next != ',') {
                    return false;
                }
            }
        }

        /** The index of the closing quote of a string of printable ASCII without escapes, moving past it; else -1. */
        private int string() {
            for (int i = pos + 1; i < json.length; i++) {
                byte c = json[i];
                if (c == '"') {
                    pos = i + 1;
                    return i;
                }
                if (c == '\\' || c < 0x20) { // a negative byte is not ASCII
                    return -1;
                }
            }
            return -1;
        }

        private boolean integer() {
            boolean negative = json[pos] == '-';
            if (negative) {
                pos++;
            }
            int digitsStart = pos;
            while (pos < json.length && json[pos] >= '0' && json[pos] <= '9') {
                pos++;
            }
            int digits = pos - digitsStart;
            if (digits < 1
                    || digits > 15
                    || (digits > 1 && json[digitsStart] == '0')
                    || (negative && digits == 1 && json[digitsStart] == '0')) {
                return false;
            }
            return pos >= json.length || (json[pos] != '.' && json[pos] != 'e' && json[pos] != 'E');
        }

        private boolean literal(String word) {
            int n = word.length();
            if (pos + n > json.length) {
                return false;
            }
            for (int i = 0; i < n; i++) {
                if (json[pos + i] != word.charAt(i)) {
                    return false;
                }
            }
            pos += n;
            return true;
        }
    }

    /** One object member: its decoded name and its canonical value; ordered by name in UTF-16 code units. */
    private record Member(String name, CharSequence value) implements Comparable<Member> {
        @Override
        public int compareTo(Member other) {
            return name.compareTo(other.name);
        }
    }
}
