package dev.exactly.payments.edge;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The ways an attacker spells one path so that a check on the raw URI and the dispatcher disagree:
 * percent-encoded letters (one, several, all; upper and lower hex), double encoding, matrix parameters on
 * each segment, doubled slashes, dot segments (plain and encoded), encoded slashes and backslashes, case
 * changes, trailing slashes and dots, whitespace, control and non-ASCII characters, query strings.
 */
final class PathSpellings {
    private PathSpellings() {}

    /** Every spelling of {@code path} (which starts with {@code /}); the canonical path comes first. */
    static List<String> of(String path) {
        String[] segments = path.substring(1).split("/");
        Set<String> out = new LinkedHashSet<>();
        out.add(path);
        for (int s = 0; s < segments.length; s++) {
            out.add(replace(segments, s, encodeAll(segments[s], false)));
            out.add(replace(segments, s, encodeAll(segments[s], true)));
            out.add(replace(segments, s, encodeFirst(segments[s])));
            out.add(replace(segments, s, doubleEncodeFirst(segments[s])));
            out.add(replace(segments, s, segments[s] + ";x=1"));
            out.add(replace(segments, s, segments[s] + ";"));
            out.add(replace(segments, s, segments[s].toUpperCase(Locale.ROOT)));
            out.add(replace(segments, s, capitalise(segments[s])));
            out.add(replace(segments, s, segments[s] + "%20"));
            out.add(replace(segments, s, segments[s] + "%00"));
            out.add(replace(segments, s, segments[s] + "%09"));
            out.add(replace(segments, s, segments[s] + "."));
            out.add(replace(segments, s, fullwidthFirst(segments[s])));
        }
        out.add("/" + String.join("/", encodeEveryLetter(segments)));
        out.add("/" + path);
        out.add(path.replaceFirst("/", "//"));
        out.add(path.replace("/", "//"));
        out.add(path + "/");
        out.add(path + "//");
        out.add(path + "/.");
        out.add(path + "?state=stuck&x=%00");
        out.add("/." + path);
        out.add(insertAfterFirst(path, "/./"));
        out.add(insertAfterFirst(path, "/x/../"));
        out.add(insertAfterFirst(path, "/%2e/"));
        out.add(insertAfterFirst(path, "/%2E%2E/" + segments[0] + "/"));
        out.add(path.replaceFirst("/", "/%2F"));
        out.add(path.replace("/", "%2F").replaceFirst("%2F", "/"));
        out.add(path.replace("/", "%2f").replaceFirst("%2f", "/"));
        out.add(path.replace("/", "\\"));
        out.add(path.replaceFirst("/", "/%5C"));
        out.add(insertAfterFirst(path, "/;/"));
        out.add(path + "%23fragment");
        out.add(path + "%zz");
        out.add(path + "%");
        return new ArrayList<>(out);
    }

    private static String replace(String[] segments, int index, String replacement) {
        String[] copy = segments.clone();
        copy[index] = replacement;
        return "/" + String.join("/", copy);
    }

    private static String insertAfterFirst(String path, String insert) {
        int second = path.indexOf('/', 1);
        return second < 0 ? path + insert : path.substring(0, second) + insert + path.substring(second + 1);
    }

    private static String encodeAll(String segment, boolean upper) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < segment.length(); i++) {
            b.append(String.format(upper ? "%%%02X" : "%%%02x", (int) segment.charAt(i)));
        }
        return b.toString();
    }

    private static String encodeFirst(String segment) {
        return String.format("%%%02X", (int) segment.charAt(0)) + segment.substring(1);
    }

    private static String doubleEncodeFirst(String segment) {
        return String.format("%%25%02X", (int) segment.charAt(0)) + segment.substring(1);
    }

    private static String capitalise(String segment) {
        return Character.toUpperCase(segment.charAt(0)) + segment.substring(1);
    }

    /** The first letter as its full-width form, percent-encoded UTF-8 (U+FF41 is 'a'). */
    private static String fullwidthFirst(String segment) {
        char c = segment.charAt(0);
        if (c < 'a' || c > 'z') {
            return segment + "%EF%BC%8F";
        }
        int codePoint = 0xFF41 + (c - 'a');
        StringBuilder b = new StringBuilder();
        for (byte x : new String(Character.toChars(codePoint)).getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            b.append(String.format("%%%02X", x & 0xff));
        }
        return b + segment.substring(1);
    }

    private static String[] encodeEveryLetter(String[] segments) {
        String[] copy = new String[segments.length];
        for (int i = 0; i < segments.length; i++) {
            copy[i] = encodeAll(segments[i], i % 2 == 0);
        }
        return copy;
    }
}
