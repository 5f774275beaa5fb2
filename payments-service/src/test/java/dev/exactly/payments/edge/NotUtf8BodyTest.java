package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.DefaultServiceTest;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * A body is JSON in UTF-8 (RFC 8259 section 8.1), decoded strictly (RFC 3629). Before, the service's JSON
 * reader took overlong forms as the characters they spell ({@code C0 AF} became {@code /} in a charge's
 * description), sequences past U+10FFFF, and UTF-16 or UTF-32 bodies guessed from their zero bytes, so
 * that a charge kept other text than its bytes say in UTF-8, which is what an intermediary reading them
 * checked.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class NotUtf8BodyTest extends DefaultServiceTest {

    private static final String BEFORE =
            "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_u\",\"description\":\"x";
    private static final String AFTER = "y\"}";

    private static byte[] bytes(String before, int[] middle, String after) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(before.getBytes(StandardCharsets.UTF_8));
        for (int b : middle) {
            out.write(b);
        }
        out.writeBytes(after.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    private Answer postBytes(String path, String key, byte[] body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + ACME)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return send(b.build());
    }

    @Test
    void aBodyThatIsNotUtf8IsRefusedWhereItStopsBeingUtf8AndNothingRuns() {
        long charges = count("SELECT count(*) FROM payments_charge");
        int at = BEFORE.length() + 1; // the first byte after "x", counted from 1
        int[][] sequences = {
            {0xC0, 0xAF}, // '/' overlong in two bytes
            {0xE0, 0x80, 0xAF}, // '/' overlong in three
            {0xF0, 0x80, 0x80, 0xAF}, // and in four
            {0xC1, 0xBF}, // U+007F overlong
            {0xED, 0xA0, 0x80}, // a surrogate, encoded
            {0xF4, 0x90, 0x80, 0x80}, // past U+10FFFF
            {0x80}, // a continuation byte alone
            {0xE2, 0x82}, // a sequence cut short
            {0xFF},
        };
        int n = 0;
        for (int[] sequence : sequences) {
            Answer answer = postBytes("/v1/charges", "not-utf8-" + n++, bytes(BEFORE, sequence, AFTER));
            assertThat(answer.status()).as(answer.text()).isEqualTo(422);
            assertThat(answer.text())
                    .contains("invalid_json")
                    .contains("the request body is not valid UTF-8 (byte " + at + ")");
        }
        assertThat(count("SELECT count(*) FROM payments_charge")).isEqualTo(charges);

        // the same charge in well-formed UTF-8 is a charge, its text as sent
        Answer fine = postBytes(
                "/v1/charges", "utf8-fine", bytes(BEFORE, new int[] {0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80}, AFTER));
        assertThat(fine.status()).as(fine.text()).isEqualTo(201);
        assertThat(fine.json().get("description").stringValue()).isEqualTo("x\u00e9\ud83d\ude00y");
    }

    @Test
    void utf16AndUtf32BodiesAreToldToBeUtf8() {
        String body = "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_w\"}";
        long charges = count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_w'");
        for (java.nio.charset.Charset charset : new java.nio.charset.Charset[] {
            StandardCharsets.UTF_16LE,
            StandardCharsets.UTF_16BE,
            StandardCharsets.UTF_16,
            java.nio.charset.Charset.forName("UTF-32BE"),
            java.nio.charset.Charset.forName("UTF-32LE")
        }) {
            Answer answer = postBytes("/v1/charges", "wide-" + charset.name(), body.getBytes(charset));
            assertThat(answer.status()).as(charset + ": " + answer.text()).isEqualTo(422);
            assertThat(answer.text()).contains("invalid_json").contains("must be UTF-8");
        }
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_w'"))
                .isEqualTo(charges);
    }

    @Test
    void aByteOrderMarkBeforeTheJsonIsIgnored() {
        Answer answer = postBytes(
                "/v1/charges",
                "bom-1",
                bytes(
                        "",
                        new int[] {0xEF, 0xBB, 0xBF},
                        "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_b\"}"));
        assertThat(answer.status()).as(answer.text()).isEqualTo(201);
    }

    @Test
    void everyJsonEndpointDecodesAlike() {
        Answer endpoint = postBytes(
                "/v1/webhook-endpoints",
                null,
                bytes("{\"url\":\"https://example.com/hooks\",\"description\":\"a", new int[] {0xC0, 0xAF}, "\"}"));
        assertThat(endpoint.status()).as(endpoint.text()).isEqualTo(422);
        assertThat(endpoint.text()).contains("not valid UTF-8");
        assertThat(count("SELECT count(*) FROM payments_webhook_endpoint WHERE description = 'a/'"))
                .isZero();
    }
}
