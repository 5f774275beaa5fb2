package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.internal.Hashing;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class FingerprinterTest {
    private final Fingerprinter fingerprinter = Fingerprinter.ofDefaults();

    private Fingerprint json(String body) {
        return fingerprinter.fingerprint(
                "POST", "/v1/charges", body.getBytes(StandardCharsets.UTF_8), "application/json");
    }

    @Test
    void keyOrderWhitespaceAndNumberSpellingDoNotMatter() {
        Fingerprint a = json("{\"amount\":1999,\"currency\":\"usd\",\"metadata\":{\"b\":1,\"a\":2}}");
        Fingerprint b =
                json("{ \"metadata\": {\"a\": 2.0, \"b\": 1e0},\n \"currency\": \"usd\", \"amount\": 1999.00 }");
        assertThat(a).isEqualTo(b);
        assertThat(a.algorithm()).isEqualTo(Fingerprinter.JCS_SHA256);
        assertThat(json("{\"x\":\"\\u0041\"}")).isEqualTo(json("{\"x\":\"A\"}"));
    }

    @Test
    void anyChangeOfAValueChangesTheFingerprint() {
        Fingerprint a = json("{\"amount\":1999,\"currency\":\"usd\"}");
        assertThat(json("{\"amount\":1998,\"currency\":\"usd\"}")).isNotEqualTo(a);
        assertThat(json("{\"amount\":\"1999\",\"currency\":\"usd\"}")).isNotEqualTo(a);
        assertThat(json("{\"amount\":1999,\"currency\":\"eur\"}")).isNotEqualTo(a);
        assertThat(json("{\"amount\":1999,\"currency\":\"usd\",\"extra\":null}"))
                .isNotEqualTo(a);
        assertThat(json("[1,2]")).isNotEqualTo(json("[2,1]"));
    }

    @Test
    void methodAndRouteAreFingerprinted() {
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        Fingerprint post = fingerprinter.fingerprint("POST", "/v1/charges", body, "application/json");
        assertThat(fingerprinter.fingerprint("PUT", "/v1/charges", body, "application/json"))
                .isNotEqualTo(post);
        assertThat(fingerprinter.fingerprint("POST", "/v1/refunds", body, "application/json"))
                .isNotEqualTo(post);
    }

    @Test
    void nonJsonBodiesAreHashedByteForByte() {
        Fingerprint form = fingerprinter.fingerprint(
                "POST", "/r", "a=1&b=2".getBytes(StandardCharsets.UTF_8), "application/x-www-form-urlencoded");
        assertThat(form.algorithm()).isEqualTo(Fingerprinter.RAW_SHA256);
        assertThat(fingerprinter.fingerprint(
                        "POST", "/r", "b=2&a=1".getBytes(StandardCharsets.UTF_8), "application/x-www-form-urlencoded"))
                .isNotEqualTo(form);
        Fingerprint broken = json("{\"amount\": ");
        assertThat(broken.algorithm()).isEqualTo(Fingerprinter.RAW_SHA256);
        assertThat(fingerprinter.fingerprint("POST", "/r", new byte[0], null).algorithm())
                .isEqualTo(Fingerprinter.RAW_SHA256);
    }

    @Test
    void numbersBeyondDoublePrecisionAreNeverConflated() {
        Fingerprint a = json("{\"order\":9007199254740993}");
        Fingerprint b = json("{\"order\":9007199254740992}");
        assertThat(a).isNotEqualTo(b);
        assertThat(a.algorithm()).isEqualTo(Fingerprinter.RAW_SHA256);
        assertThat(json("{\"order\":9007199254740992}").algorithm()).isEqualTo(Fingerprinter.JCS_SHA256);
        assertThat(json("{\"x\":0.1000000000000000055511151231257827}")).isNotEqualTo(json("{\"x\":0.1}"));
        assertThat(json("{\"s\":\"12345678901234567890\"}").algorithm()).isEqualTo(Fingerprinter.JCS_SHA256);
        // a decimal too small for any double reads as 0, and an integer beyond 2^53 is not taken for its double
        assertThat(json("{\"x\":1e-400}")).isNotEqualTo(json("{\"x\":0}"));
        assertThat(json("{\"x\":1e-400}").algorithm()).isEqualTo(Fingerprinter.RAW_SHA256);
        assertThat(json("{\"x\":1e22}").algorithm()).isEqualTo(Fingerprinter.RAW_SHA256);
        // a subnormal double holds fewer than 15 digits: 1.23456789012345e-320 would read back as 1.2346e-320
        assertThat(json("{\"x\":1.23456789012345e-320}")).isNotEqualTo(json("{\"x\":1.2346e-320}"));
        assertThat(json("{\"x\":5e-324}")).isNotEqualTo(json("{\"x\":4.9e-324}"));
        assertThat(json("{\"x\":0.15E1}")).isEqualTo(json("{\"x\":1.50}")).isEqualTo(json("{\"x\":1.5}"));
    }

    @Test
    void jsonThatIsNotJsonByItsGrammarIsHashedAsItsBytes() {
        for (String body : new String[] {
            "{\"a\":01}",
            "{\"a\":-01}",
            "{\"a\":1.}",
            "{\"a\":.5}",
            "{\"a\":+1}",
            "{\"a\":1e}",
            "{\"a\":1,\"a\":1}",
            "1",
            "\"text\""
        }) {
            assertThat(json(body).algorithm()).as(body).isEqualTo(Fingerprinter.RAW_SHA256);
        }
        assertThat(json("{\"a\":01}")).isNotEqualTo(json("{\"a\":1}"));
    }

    @Test
    void oversizedBodiesAreATypedError() {
        Fingerprinter small = Fingerprinter.withMaxBodyBytes(16);
        assertThat(small.fingerprint("POST", "/r", new byte[16], null)).isNotNull();
        assertThatThrownBy(() -> small.fingerprint("POST", "/r", new byte[17], null))
                .isInstanceOfSatisfying(PayloadTooLargeException.class, e -> {
                    assertThat(e.limitBytes()).isEqualTo(16);
                    assertThat(e.code()).isEqualTo("payload_too_large");
                });
        assertThatThrownBy(() -> small.checkLength(1_000_000)).isInstanceOf(PayloadTooLargeException.class);
    }

    @Test
    void encodedFormRoundTrips() {
        Fingerprint fp = json("{}");
        assertThat(Fingerprint.decode(fp.encoded())).isEqualTo(fp);
    }

    @Test
    void deepJsonIsRefusedBeforeAnyParserRecurses() {
        String deep = "[".repeat(20_000) + "]".repeat(20_000);
        assertThatThrownBy(() -> json(deep)).isInstanceOfSatisfying(JsonTooDeepException.class, e -> {
            assertThat(e.maxDepth()).isEqualTo(Fingerprinter.DEFAULT_MAX_JSON_DEPTH);
            assertThat(e.code()).isEqualTo("json_too_deep");
        });
        String objects = "{\"a\":".repeat(65) + "1" + "}".repeat(65);
        assertThatThrownBy(() -> json(objects)).isInstanceOf(JsonTooDeepException.class);
        // exactly at the limit is fine, and brackets inside strings do not count
        String atLimit = "{\"a\":".repeat(64) + "\"[[[[{{{{\"" + "}".repeat(64);
        assertThat(json(atLimit).algorithm()).isEqualTo(Fingerprinter.JCS_SHA256);
        // a body of no declared type that nests that deep is just bytes
        assertThat(fingerprinter
                        .fingerprint("POST", "/r", deep.getBytes(StandardCharsets.UTF_8), null)
                        .algorithm())
                .isEqualTo(Fingerprinter.RAW_SHA256);
        assertThatThrownBy(() -> Fingerprinter.of(1024, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(Fingerprinter.of(1024, 2).maxJsonDepth()).isEqualTo(2);
        assertThatThrownBy(() -> Fingerprinter.of(1024, 2)
                        .fingerprint(
                                "POST", "/r", "[[[1]]]".getBytes(StandardCharsets.UTF_8), "application/problem+json"))
                .isInstanceOf(JsonTooDeepException.class);
    }

    @Test
    void hugeNumberLiteralsAreHashedByBytesWithoutBeingParsed() {
        String digits = "9".repeat(200_000);
        Fingerprint huge = json("{\"amount\":" + digits + "}");
        assertThat(huge.algorithm()).isEqualTo(Fingerprinter.RAW_SHA256);
        assertThat(json("{\"amount\":" + digits + "8}")).isNotEqualTo(huge);
        assertThat(json("{\"x\":1e999999999}").algorithm()).isEqualTo(Fingerprinter.RAW_SHA256);
    }

    @Test
    void jsonMediaTypesAreRecognised() {
        assertThat(Fingerprinter.isJson("application/json; charset=utf-8")).isTrue();
        assertThat(Fingerprinter.isJson("Application/Merge-Patch+JSON")).isTrue();
        assertThat(Fingerprinter.isJson("text/plain")).isFalse();
        assertThat(Fingerprinter.isJson(null)).isFalse();
    }

    /** Stored records carry fingerprints: a change of the digest's layout would refuse every retry after an upgrade. */
    @Test
    void theFingerprintIsSha256OverLengthPrefixedMethodRouteAndCanonicalBody() {
        assertThat(json("{ \"amount\" : 100 }").value())
                .isEqualTo("fd1fb0e21d014db01f7714413683bbc4950dbb5bbfed127ea61afde29c52e938");
        byte[] large = new byte[70_000];
        Arrays.fill(large, (byte) 'x');
        String streamed =
                fingerprinter.fingerprint("POST", "/r", large, "text/plain").value();
        MessageDigest digest = Hashing.sha256();
        Hashing.field(digest, "POST");
        Hashing.field(digest, "/r");
        Hashing.field(digest, large);
        assertThat(streamed).isEqualTo(Hashing.hex(digest.digest()));
    }

    @Test
    void jsonIsReadInItsDeclaredCharsetAndBytesThatAreNotTextAreHashedAsTheyAre() {
        String latin1 = "application/json; charset=ISO-8859-1";
        byte[] jose = "{\"name\": \"Jos\u00e9\"}".getBytes(StandardCharsets.ISO_8859_1);
        byte[] joseGrave = "{\"name\": \"Jos\u00e8\"}".getBytes(StandardCharsets.ISO_8859_1);
        assertThat(fingerprinter.fingerprint("POST", "/v1/customers", jose, latin1))
                .isNotEqualTo(fingerprinter.fingerprint("POST", "/v1/customers", joseGrave, latin1));
        // the same text in ISO-8859-1 and in UTF-8 is the same JSON
        byte[] joseUtf8 = "{\"name\":\"Jos\u00e9\"}".getBytes(StandardCharsets.UTF_8);
        assertThat(fingerprinter.fingerprint("POST", "/v1/customers", jose, latin1))
                .isEqualTo(fingerprinter.fingerprint("POST", "/v1/customers", joseUtf8, "application/json"));
        // read as UTF-8 (nothing declared), those Latin-1 bytes are not text: they differ as bytes, not as U+FFFD
        assertThat(fingerprinter.fingerprint("POST", "/v1/customers", jose, "application/json"))
                .isNotEqualTo(fingerprinter.fingerprint("POST", "/v1/customers", joseGrave, "application/json"));
    }

    @Test
    void loneSurrogatesInJsonStringsAreNotOneCharacter() {
        assertThat(json("{\"d\":\"\\ud800\"}")).isNotEqualTo(json("{\"d\":\"\\udbff\"}"));
        assertThat(json("{\"d\":\"\\udc00x\"}")).isNotEqualTo(json("{\"d\":\"\\udc01x\"}"));
        assertThat(json("{\"d\":\"\\ud800\"}")).isNotEqualTo(json("{\"d\":\"?\"}"));
        // a pair is one character, however it is spelled
        assertThat(json("{\"d\":\"\\ud83d\\ude00\"}")).isEqualTo(json("{\"d\":\"\ud83d\ude00\"}"));
    }
}
