package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.DefaultServiceTest;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Text the database cannot keep as it was sent (U+0000, which PostgreSQL's text refuses; other control
 * characters; lone UTF-16 surrogates, which have no encoding) is refused with a 422 before anything runs: it
 * reached the database, which failed the request, and the client was told the outcome was unknown (retry
 * with the same key, forever) or that the database was unavailable.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UnstorableTextTest extends DefaultServiceTest {

    private void assertRefused(Answer answer, String param) {
        assertThat(answer.status()).as(answer.text()).isEqualTo(422);
        assertThat(answer.text()).contains("parameter_invalid").contains(param);
    }

    @Test
    void aChargeWithUnstorableTextIsRefusedAndNothingRuns() {
        long before = count("SELECT count(*) FROM payments_charge");
        assertRefused(
                post(
                        "/v1/charges",
                        ACME,
                        "nul-1",
                        "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_n\",\"description\":\"a\\u0000b\"}"),
                "description");
        assertRefused(
                post(
                        "/v1/charges",
                        ACME,
                        "nul-1",
                        "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_n\",\"description\":\"a\\u0000b\"}"),
                "description");
        assertRefused(
                post(
                        "/v1/charges",
                        ACME,
                        "surrogate-1",
                        "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_s\",\"description\":\"\\ud800\"}"),
                "description");
        assertRefused(
                post(
                        "/v1/charges",
                        ACME,
                        "bell-1",
                        "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_s\",\"metadata\":{\"note\":\"\\u0007\"}}"),
                "metadata");
        assertThat(count("SELECT count(*) FROM payments_charge")).isEqualTo(before);
        // a description with tabs, line breaks and a paired surrogate is text
        Answer fine = post(
                "/v1/charges",
                ACME,
                "fine-1",
                "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_s\",\"description\":\"a\\tb\\nc \\ud83d\\ude00\"}");
        assertThat(fine.status()).as(fine.text()).isEqualTo(201);
        assertThat(fine.json().get("description").stringValue()).isEqualTo("a\tb\nc \ud83d\ude00");
    }

    @Test
    void aDescriptionIsCountedAsTheProcessorCountsIt() {
        long before = count("SELECT count(*) FROM payments_charge");
        String emoji = "\\ud83d\\ude00";
        // 501 emoji: 501 code points, 1,002 UTF-16 units, past the processor's 1,000; was a 500 (outcome unknown,
        // "retry with the same key") on every retry
        Answer tooLong = post(
                "/v1/charges",
                ACME,
                "emoji-1",
                "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_e\",\"description\":\"" + emoji.repeat(501)
                        + "\"}");
        assertRefused(tooLong, "description");
        assertThat(tooLong.text()).contains("UTF-16");
        assertThat(count("SELECT count(*) FROM payments_charge")).isEqualTo(before);
        Answer fits = post(
                "/v1/charges",
                ACME,
                "emoji-2",
                "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_e\",\"description\":\"" + emoji.repeat(500)
                        + "\"}");
        assertThat(fits.status()).as(fits.text()).isEqualTo(201);
    }

    @Test
    void anEmptyWebhookUrlIsRefused() {
        Answer answer = post("/v1/webhook-endpoints", ACME, null, "{\"url\":\"\"}");
        assertThat(answer.status()).as(answer.text()).isEqualTo(422);
        assertThat(answer.text()).contains("url");
        assertThat(count("SELECT count(*) FROM payments_webhook_endpoint WHERE url = ''"))
                .isZero();
    }

    @Test
    void aWebhookEndpointWithUnstorableTextIsRefused() {
        assertRefused(
                post(
                        "/v1/webhook-endpoints",
                        ACME,
                        null,
                        "{\"url\":\"https://example.com/hooks\",\"description\":\"a\\u0000b\"}"),
                "description");
    }

    @Test
    void aWebhookUrlWithAPortNoConnectionCanUseIsRefused() {
        for (String url : new String[] {"http://example.com:99999/", "http://example.com:0/x"}) {
            Answer answer = post("/v1/webhook-endpoints", ACME, null, "{\"url\":\"" + url + "\"}");
            assertThat(answer.status()).as(url + ": " + answer.text()).isEqualTo(422);
            assertThat(answer.text()).contains("url_invalid");
        }
    }

    @Test
    void aLedgerAccountThatNamesNoCustomerIsNotFoundNotADatabaseFailure() {
        Answer answer = get("/v1/ledger/entries?account=customer:a%00b:usd", ACME);
        assertThat(answer.status()).as(answer.text()).isEqualTo(404);
    }
}
