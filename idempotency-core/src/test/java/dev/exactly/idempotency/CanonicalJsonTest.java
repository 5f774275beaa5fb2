package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.erdtman.jcs.JsonCanonicalizer;
import org.jspecify.annotations.Nullable;

/**
 * The fast canonical form is the general canonicaliser's, byte for byte, on every document it accepts,
 * and it hands every other document over: random documents with shuffled members, random whitespace,
 * escapes, control and non-ASCII characters, surrogate pairs and integers at the 15-digit edge.
 */
class CanonicalJsonTest {

    @Property(tries = 500)
    void whatTheFastPathAcceptsItCanonicalisesExactlyAsTheLibraryDoes(@ForAll("documents") String json)
            throws IOException {
        String fast = canonical(json);
        assertThat(fast).as("a document of the handled kind is handled: %s", json).isNotNull();
        assertThat(fast).isEqualTo(new JsonCanonicalizer(json).getEncodedString());
    }

    @Property(tries = 500)
    void aDocumentWithAnythingElseIsLeftToTheLibrary(@ForAll("documents") String json,
            @ForAll("foreign") String foreign) throws IOException {
        String mixed = "[" + json + "," + foreign + "]";
        String fast = canonical(mixed);
        if (fast != null) {
            assertThat(fast).isEqualTo(new JsonCanonicalizer(mixed).getEncodedString());
        }
    }

    @Property(tries = 500)
    void aDocumentRecognisedAsCanonicalIsTheLibrarysCanonicalFormAndItsOwn(@ForAll("documents") String json,
            @ForAll("foreign") String foreign) throws IOException {
        for (String document : List.of(json, "[" + json + "," + foreign + "]")) {
            if (CanonicalJson.alreadyCanonical(document.getBytes(StandardCharsets.UTF_8), 64)) {
                assertThat(new JsonCanonicalizer(document).getEncodedString()).isEqualTo(document);
            }
        }
        String canonical = new JsonCanonicalizer(json).getEncodedString();
        boolean plain = canonical.chars().allMatch(c -> c >= 0x20 && c < 0x80 && c != '\\');
        assertThat(CanonicalJson.alreadyCanonical(canonical.getBytes(StandardCharsets.UTF_8), 64))
                .as("the canonical form of %s, %s", json, canonical).isEqualTo(plain);
    }

    @Example
    void onlyCompactSortedAsciiIsTakenAsItIs() {
        for (String json : List.of("{}", "[]", "{\"a\":1,\"b\":[true,false,null,\"x\"],\"c\":{\"d\":-12}}",
                "[999999999999999,0,-1]", "[\"\u007f\"]")) {
            assertThat(CanonicalJson.alreadyCanonical(json.getBytes(StandardCharsets.UTF_8), 64)).as(json).isTrue();
        }
        for (String json : List.of("{\"b\":1,\"a\":2}", "{\"a\":1,\"a\":1}", "{\"a\": 1}", "[-0]", "[1.0]", "[1e3]",
                "[01]", "[1234567890123456]", "[\"\\n\"]", "[\"\u00e9\"]", "1", "\"a\"", "[1,]", "[1]x", "[tru]",
                "[[[1]]]")) {
            assertThat(CanonicalJson.alreadyCanonical(json.getBytes(StandardCharsets.UTF_8), 2)).as(json).isFalse();
        }
        assertThat(CanonicalJson.alreadyCanonical("[[1]]".getBytes(StandardCharsets.UTF_8), 2)).isTrue();
    }

    @Example
    void edgesAreHandedOver() {
        for (String json : List.of("1", "\"a\"", "true", "{\"a\":1.5}", "{\"a\":1e3}", "{\"a\":1234567890123456}",
                "{\"a\":1,\"a\":2}", "{\"a\":\"\\ud800\"}", "{\"a\":01}", "{\"a\":+1}", "[1,]", "{\"a\":1,}",
                "{\"a\" 1}", "[1 2]", "{\"a\":tru}", "{\"a\":\"x}", "[\"\u0001\"]", "{} {}", "[nulls]",
                "{\"a\":\"\\x\"}", "[-]", "[\"\\u12g4\"]")) {
            assertThat(canonical(json)).as(json).isNull();
        }
    }

    @Example
    void negativeZeroAndEscapesFollowTheScheme() throws IOException {
        for (String json : List.of("[-0]", "{\"b\":[],\"a\":{}}", "[\"\\u001f\\u007f\\/\\\"\\\\\\b\\f\\n\\r\\t\"]",
                "{\"\\u00e9\":1,\"e\":2,\"\\ud83d\\ude00\":3,\"\uffff\":4}", " [ 1 , -2 , 999999999999999 ] ")) {
            assertThat(canonical(json)).as(json).isEqualTo(new JsonCanonicalizer(json).getEncodedString());
        }
    }

    @Example
    void nestingBeyondTheLimitStopsTheParse() {
        CanonicalJson shallow = new CanonicalJson("[{\"a\":[1]}]", 2);
        assertThat(shallow.canonicalise()).isNull();
        assertThat(shallow.tooDeep()).isTrue();
        CanonicalJson enough = new CanonicalJson("[{\"a\":[1]}]", 3);
        assertThat(enough.canonicalise()).isEqualTo("[{\"a\":[1]}]");
        assertThat(enough.tooDeep()).isFalse();
        CanonicalJson foreign = new CanonicalJson("[1.5]", 3);
        assertThat(foreign.canonicalise()).isNull();
        assertThat(foreign.tooDeep()).isFalse();
        assertThat(new CanonicalJson("[".repeat(100_000), 64).canonicalise()).isNull();
    }

    /** The fast form with the fingerprinter's default nesting limit. */
    private static @Nullable String canonical(String json) {
        return new CanonicalJson(json, Fingerprinter.DEFAULT_MAX_JSON_DEPTH).canonicalise();
    }

    @Provide
    Arbitrary<String> documents() {
        return Arbitraries.lazyOf(() -> object(3), () -> array(3));
    }

    @Provide
    Arbitrary<String> foreign() {
        return Arbitraries.of("1.5", "-0.0", "1e21", "1E-7", "12345678901234567", "\"\\udc00\"", "{\"k\":1,\"k\":1}",
                "0.1", "123456789012345.5");
    }

    private Arbitrary<String> value(int depth) {
        List<Arbitrary<String>> choices = new ArrayList<>(List.of(string(), integer(),
                Arbitraries.of("true", "false", "null")));
        if (depth > 0) {
            choices.add(Arbitraries.lazy(() -> object(depth - 1)));
            choices.add(Arbitraries.lazy(() -> array(depth - 1)));
        }
        return Arbitraries.oneOf(choices);
    }

    private Arbitrary<String> object(int depth) {
        Arbitrary<String> member = Combinators.combine(string(), ws(), ws(), value(depth))
                .as((name, a, b, v) -> name + a + ":" + b + v);
        return member.list().ofMaxSize(6).uniqueElements(CanonicalJsonTest::nameOf)
                .flatMap(members -> ws().map(w -> "{" + w + String.join("," + w, members) + w + "}"));
    }

    private Arbitrary<String> array(int depth) {
        return value(depth).list().ofMaxSize(5)
                .flatMap(items -> ws().map(w -> "[" + w + String.join(w + "," + w, items) + "]"));
    }

    /** A member's name as decoded JSON text (escapes of the same name spelled two ways count as one). */
    private static String nameOf(String member) {
        String literal = member.substring(0, endOfString(member) + 1);
        try {
            return new JsonCanonicalizer("[" + literal + "]").getEncodedString();
        } catch (IOException | RuntimeException e) {
            return literal;
        }
    }

    private static int endOfString(String s) {
        int i = 1;
        while (s.charAt(i) != '"') {
            i += s.charAt(i) == '\\' ? 2 : 1;
        }
        return i;
    }

    private Arbitrary<String> string() {
        Arbitrary<String> piece = Arbitraries.oneOf(
                Arbitraries.strings().withCharRange('a', 'z').ofMaxLength(4),
                Arbitraries.of("\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0000", "\\u001F",
                        "\\u00e9", "\\u20AC", "\\ud83d\\ude00", "é", "€", "😀", "\u007f", "\u2028", " ", "A", "Z", "_"));
        return piece.list().ofMaxSize(5).map(parts -> "\"" + String.join("", parts) + "\"");
    }

    private Arbitrary<String> integer() {
        return Arbitraries.oneOf(
                Arbitraries.longs().between(-999_999_999_999_999L, 999_999_999_999_999L).map(String::valueOf),
                Arbitraries.of("0", "-0", "999999999999999", "-999999999999999", "100000000000000"));
    }

    private Arbitrary<String> ws() {
        return Arbitraries.of("", "", "", " ", "\n", "\t ", "\r\n  ");
    }
}
