package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.erdtman.jcs.JsonCanonicalizer;
import org.erdtman.jcs.NumberToJSON;
import org.jspecify.annotations.Nullable;

/**
 * The canonical form is the one an independent RFC 8785 implementation writes (erdtman's
 * java-json-canonicalization, a test dependency only), byte for byte, on every document canonicalised:
 * random documents with shuffled members, random whitespace, escapes, control and non-ASCII characters,
 * surrogate pairs, integers at the 15-digit edge and decimals in every notation; and random doubles of every
 * magnitude are written as that implementation writes them. A document it does not canonicalise is one of
 * the kinds it is meant to hand to the exact-bytes fingerprint.
 */
class CanonicalJsonTest {
    private static final Pattern DECIMAL = Pattern.compile("[0-9](\\.[0-9]|e[+-])|[0-9]{16}");

    @Property(tries = 500)
    void documentsAreCanonicalisedExactlyAsAnIndependentImplementationDoes(@ForAll("documents") String json)
            throws IOException {
        String canonical = canonical(json);
        assertThat(canonical).as("a JSON document is canonicalised: %s", json).isNotNull();
        assertThat(canonical).isEqualTo(new JsonCanonicalizer(json).getEncodedString());
    }

    @Property(tries = 500)
    void aDocumentWithSomethingTheSchemeCannotStandForIsNotCanonicalised(
            @ForAll("documents") String json, @ForAll("foreign") String foreign) {
        assertThat(canonical("[" + json + "," + foreign + "]")).isNull();
        assertThat(canonical("{\"a\":" + json + ",\"b\":" + foreign + "}")).isNull();
    }

    @Property(tries = 20)
    void doublesAreWrittenAsEcmaScriptWritesThem(@ForAll long seed) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        StringBuilder ours = new StringBuilder();
        for (int i = 0; i < 5_000; i++) {
            double d = switch (i % 4) {
                case 0 -> Double.longBitsToDouble(random.nextLong()); // any bit pattern: subnormals to 1e308
                case 1 -> random.nextLong(-1_000_000_000L, 1_000_000_000L) / 100.0; // amounts with cents
                case 2 -> random.nextDouble(-1e-5, 1e-5); // where plain notation ends below
                default -> Math.scalb(random.nextDouble(), random.nextInt(60, 80)); // and above, around 1e21
            };
            if (!Double.isFinite(d)) {
                continue;
            }
            ours.setLength(0);
            JsonNumbers.appendEcmaScript(ours, d);
            assertThat(ours.toString())
                    .as("%s (bits %x)", d, Double.doubleToRawLongBits(d))
                    .isEqualTo(NumberToJSON.serializeNumber(d));
        }
    }

    @Property(tries = 20)
    void decimalLiteralsInAnySpellingAreWrittenAsTheIndependentImplementationWritesThem(@ForAll long seed)
            throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < 2_000; i++) {
            StringBuilder literal = new StringBuilder(random.nextBoolean() ? "-" : "");
            String digits = Long.toString(random.nextLong(1, 1_000_000_000_000_000L)); // 1 to 18 digits
            int point = random.nextInt(digits.length() + 1);
            String whole = digits.substring(0, point);
            literal.append(whole.isEmpty() ? "0" : whole.replaceFirst("^0+(?=.)", ""));
            literal.append('.')
                    .append("0".repeat(random.nextInt(3)))
                    .append(digits, point, digits.length())
                    .append("0".repeat(random.nextInt(3)));
            if (literal.charAt(literal.length() - 1) == '.') {
                literal.append('0');
            }
            if (random.nextBoolean()) {
                literal.append(random.nextBoolean() ? 'e' : 'E')
                        .append(random.nextBoolean() ? "-" : "+")
                        .append(random.nextInt(330));
            }
            String json = "[" + literal + "]";
            String ours = canonical(json);
            if (JsonNumbers.roundTrips(literal.toString())) {
                assertThat(ours).as(json).isEqualTo(new JsonCanonicalizer(json).getEncodedString());
            } else {
                assertThat(ours).as("%s does not stand for its double", json).isNull();
            }
        }
    }

    @Example
    // 5e-324 is Double.MIN_VALUE's shortest spelling and 2^53 + 1 no double: both literals round on purpose
    @SuppressWarnings("FloatingPointLiteralPrecision")
    void whereOneDigitIsEnoughOneIsWritten() throws IOException {
        for (double d : new double[] {
            Double.MIN_VALUE,
            2 * Double.MIN_VALUE,
            1e23,
            5e-324,
            1e21,
            1e-7,
            1e-6,
            123e18,
            0.1,
            -0.0,
            Double.MAX_VALUE,
            Double.MIN_NORMAL,
            9007199254740993.0
        }) {
            StringBuilder ours = new StringBuilder();
            JsonNumbers.appendEcmaScript(ours, d);
            assertThat(ours.toString()).as("%s", d).isEqualTo(NumberToJSON.serializeNumber(d));
        }
    }

    @Property(tries = 500)
    void aDocumentRecognisedAsCanonicalIsTheLibrarysCanonicalFormAndItsOwn(
            @ForAll("documents") String json, @ForAll("foreign") String foreign) throws IOException {
        for (String document : List.of(json, "[" + json + "," + foreign + "]")) {
            if (CanonicalJson.alreadyCanonical(document.getBytes(StandardCharsets.UTF_8), 64)) {
                assertThat(new JsonCanonicalizer(document).getEncodedString()).isEqualTo(document);
            }
        }
        String canonical = new JsonCanonicalizer(json).getEncodedString();
        // ASCII without escapes, integers of at most 15 digits only (the strings generated hold no digits but in
        // escapes of control characters, never 16 of them, a point or an e+/e- after one)
        boolean plain = canonical.chars().allMatch(c -> c >= 0x20 && c < 0x80 && c != '\\')
                && !DECIMAL.matcher(canonical).find();
        assertThat(CanonicalJson.alreadyCanonical(canonical.getBytes(StandardCharsets.UTF_8), 64))
                .as("the canonical form of %s, %s", json, canonical)
                .isEqualTo(plain);
    }

    @Example
    void onlyCompactSortedAsciiIsTakenAsItIs() {
        for (String json : List.of(
                "{}",
                "[]",
                "{\"a\":1,\"b\":[true,false,null,\"x\"],\"c\":{\"d\":-12}}",
                "[999999999999999,0,-1]",
                "[\"\u007f\"]")) {
            assertThat(CanonicalJson.alreadyCanonical(json.getBytes(StandardCharsets.UTF_8), 64))
                    .as(json)
                    .isTrue();
        }
        for (String json : List.of(
                "{\"b\":1,\"a\":2}",
                "{\"a\":1,\"a\":1}",
                "{\"a\": 1}",
                "[-0]",
                "[1.0]",
                "[1e3]",
                "[01]",
                "[1234567890123456]",
                "[\"\\n\"]",
                "[\"\u00e9\"]",
                "1",
                "\"a\"",
                "[1,]",
                "[1]x",
                "[tru]",
                "[[[1]]]")) {
            assertThat(CanonicalJson.alreadyCanonical(json.getBytes(StandardCharsets.UTF_8), 2))
                    .as(json)
                    .isFalse();
        }
        assertThat(CanonicalJson.alreadyCanonical("[[1]]".getBytes(StandardCharsets.UTF_8), 2))
                .isTrue();
    }

    @Example
    void edgesAreHandedOver() {
        for (String json : List.of(
                "1",
                "\"a\"",
                "true",
                "{\"a\":1,\"a\":2}",
                "{\"a\":\"\\ud800\"}",
                "{\"a\":01}",
                "{\"a\":+1}",
                "[1,]",
                "{\"a\":1,}",
                "{\"a\" 1}",
                "[1 2]",
                "{\"a\":tru}",
                "{\"a\":\"x}",
                "[\"\u0001\"]",
                "{} {}",
                "[nulls]",
                "{\"a\":\"\\x\"}",
                "[-]",
                "[\"\\u12g4\"]",
                "[1.]",
                "[.5]",
                "[1e]",
                "[1e+]",
                "[-01]",
                "[1.5.5]",
                "[1e400]",
                "[1e-400]",
                "[9007199254740993]",
                "[12345678901234567890]",
                "[0." + "1".repeat(70) + "]")) {
            assertThat(canonical(json)).as(json).isNull();
        }
    }

    @Example
    void membersInOrderOutOfOrderAtAnyPointOrNamedTwice() throws IOException {
        for (String json : List.of(
                "{\"a\":1,\"b\":{\"y\":[2,{\"q\":1,\"p\":0}],\"x\":1},\"c\":\"\\u00e9\",\"aa\":3}",
                "{\"b\":1,\"a\":2}",
                "{\"a\":{\"c\":1,\"d\":2},\"b\":[],\"c\":{}}",
                "{\"\\u0062\":1,\"a\":2,\"c\":3}",
                "{\"a\":1,\"c\":2,\"b\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"j\":10}")) {
            assertThat(canonical(json)).as(json).isEqualTo(new JsonCanonicalizer(json).getEncodedString());
        }
        StringBuilder many = new StringBuilder("{");
        for (int i = 0; i < 40; i++) {
            many.append(i == 0 ? "" : ",")
                    .append("\"k")
                    .append(100 + i)
                    .append("\":")
                    .append(i);
        }
        String ascending = many.append('}').toString();
        assertThat(canonical(ascending)).isEqualTo(new JsonCanonicalizer(ascending).getEncodedString());
        String descendingLast = ascending.replace("}", ",\"a\":0}");
        assertThat(canonical(descendingLast)).isEqualTo(new JsonCanonicalizer(descendingLast).getEncodedString());
        // a name twice: next to itself, or apart
        assertThat(canonical("{\"a\":1,\"a\":2}")).isNull();
        assertThat(canonical("{\"a\":1,\"b\":2,\"a\":3}")).isNull();
        assertThat(canonical("{\"b\":1,\"a\":2,\"b\":3}")).isNull();
    }

    @Example
    void numbersInEveryNotationFollowTheScheme() throws IOException {
        for (String json : List.of(
                "{\"a\":1.5}",
                "{\"a\":1e3}",
                "{\"a\":1234567890123456}",
                "[1E+2,1e-2,-0.0,0e5]",
                "[1e-7,0.000001,2.5e-5,100.00,-1.25E-3,1e15,12.5e14]",
                "[9007199254740992,-9007199254740992]",
                "[0.1,0.5e-300,123456.789,3.14159,-2.5E-300,1.5E-7]")) {
            assertThat(canonical(json)).as(json).isEqualTo(new JsonCanonicalizer(json).getEncodedString());
        }
    }

    @Example
    void negativeZeroAndEscapesFollowTheScheme() throws IOException {
        for (String json : List.of(
                "[-0]",
                "{\"b\":[],\"a\":{}}",
                "[\"\\u001f\\u007f\\/\\\"\\\\\\b\\f\\n\\r\\t\"]",
                "{\"\\u00e9\":1,\"e\":2,\"\\ud83d\\ude00\":3,\"\uffff\":4}",
                " [ 1 , -2 , 999999999999999 ] ")) {
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
        CanonicalJson foreign = new CanonicalJson("[1.5,01]", 3);
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
        return Arbitraries.of(
                "12345678901234567",
                "9007199254740993",
                "1e-400",
                "1e400",
                "1e21",
                "01",
                "-",
                "1.",
                "+1",
                "\"\\udc00\"",
                "\"\\ud800x\"",
                "{\"k\":1,\"k\":1}",
                "tru",
                "\"\u0001\"",
                "NaN");
    }

    private Arbitrary<String> value(int depth) {
        List<Arbitrary<String>> choices =
                new ArrayList<>(List.of(string(), integer(), decimal(), Arbitraries.of("true", "false", "null")));
        if (depth > 0) {
            choices.add(Arbitraries.lazy(() -> object(depth - 1)));
            choices.add(Arbitraries.lazy(() -> array(depth - 1)));
        }
        return Arbitraries.oneOf(choices);
    }

    private Arbitrary<String> object(int depth) {
        Arbitrary<String> member =
                Combinators.combine(string(), ws(), ws(), value(depth)).as((name, a, b, v) -> name + a + ":" + b + v);
        return member.list()
                .ofMaxSize(6)
                .uniqueElements(CanonicalJsonTest::nameOf)
                .flatMap(members -> ws().map(w -> "{" + w + String.join("," + w, members) + w + "}"));
    }

    private Arbitrary<String> array(int depth) {
        return value(depth)
                .list()
                .ofMaxSize(5)
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
                Arbitraries.of(
                        "\\\"",
                        "\\\\",
                        "\\/",
                        "\\b",
                        "\\f",
                        "\\n",
                        "\\r",
                        "\\t",
                        "\\u0000",
                        "\\u001F",
                        "\\u00e9",
                        "\\u20AC",
                        "\\ud83d\\ude00",
                        "é",
                        "€",
                        "😀",
                        "\u007f",
                        "\u2028",
                        " ",
                        "A",
                        "Z",
                        "_"));
        return piece.list().ofMaxSize(5).map(parts -> "\"" + String.join("", parts) + "\"");
    }

    private Arbitrary<String> integer() {
        return Arbitraries.oneOf(
                Arbitraries.longs()
                        .between(-999_999_999_999_999L, 999_999_999_999_999L)
                        .map(String::valueOf),
                Arbitraries.of("0", "-0", "999999999999999", "-999999999999999", "100000000000000"));
    }

    /** Decimals that a double stands for, in the notations JSON allows. */
    private Arbitrary<String> decimal() {
        return Arbitraries.oneOf(
                Arbitraries.longs()
                        .between(-99_999_999_999L, 99_999_999_999L)
                        .map(cents -> BigDecimal.valueOf(cents, 2).toPlainString()),
                Arbitraries.doubles()
                        .map(String::valueOf)
                        .filter(d -> !d.contains("N") && !d.contains("I"))
                        .filter(JsonNumbers::roundTrips),
                Arbitraries.of(
                        "1.5",
                        "-0.0",
                        "1e15",
                        "1E-7",
                        "0.1",
                        "123456789012345.5",
                        "1e+2",
                        "2E0",
                        "0.000001",
                        "1234567890123456",
                        "9007199254740992"));
    }

    private Arbitrary<String> ws() {
        return Arbitraries.of("", "", "", " ", "\n", "\t ", "\r\n  ");
    }
}
