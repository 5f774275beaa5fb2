package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * Outside demo mode, with private networks not allowed (the default), the service delivers webhooks to public
 * addresses only, so a tenant that registers a URL whose host is a non-public address by itself (the cloud
 * metadata address, a private or loopback address, {@code localhost}) is told at once, with a 422 naming the
 * address, instead of an endpoint whose every delivery would be refused. A name is kept: only its resolution,
 * at each delivery attempt, tells where it goes.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
class NonDemoWebhookTest extends ServiceTest {
    private static final String SHOP = "sk_live_shop_51c2";

    @DynamicPropertySource
    static void liveProperties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_live_hooks");
        registry.add("exactly.payments.demo", () -> "false");
        registry.add("exactly.payments.pool-size", () -> "4");
        registry.add("exactly.payments.api-key-list", () -> SHOP + "=shop");
        registry.add("exactly.payments.operator-key", () -> "sk_ops_51c2");
    }

    @Test
    void aUrlNamingANonPublicAddressIsRefusedWhenTheEndpointIsCreated() {
        String[][] refused = {
            {"http://169.254.169.254/latest/meta-data", "169.254.169.254, a link-local address"},
            {"https://10.0.0.7:8443/hooks", "10.0.0.7, a private address"},
            {"http://127.0.0.1:9000/hooks", "127.0.0.1, a loopback address"},
            {"https://[::ffff:192.168.0.4]/hooks", "192.168.0.4, a private address"},
            {"http://localhost:9000/hooks", "localhost, a loopback name"},
        };
        for (String[] c : refused) {
            Answer answer = post("/v1/webhook-endpoints", SHOP, null, "{\"url\":\"" + c[0] + "\"}");
            assertThat(answer.status()).as(c[0] + " -> " + answer.text()).isEqualTo(422);
            assertThat(answer.header("Content-Type")).startsWith("application/problem+json");
            assertThat(answer.problemType()).isEqualTo("validation-failed");
            JsonNode error = answer.json().get("errors").get(0);
            assertThat(error.get("field").stringValue()).isEqualTo("url");
            assertThat(error.get("code").stringValue()).isEqualTo("url_not_public");
            assertThat(error.get("message").stringValue())
                    .isEqualTo("url's host is " + c[1] + ": webhooks are delivered to public addresses only");
        }
        assertThat(count("SELECT count(*) FROM payments_webhook_endpoint"))
                .as("nothing was created")
                .isZero();

        Answer ambiguous = post("/v1/webhook-endpoints", SHOP, null, "{\"url\":\"http://2130706433/hooks\"}");
        assertThat(ambiguous.status()).isEqualTo(422);
        assertThat(ambiguous.json().get("errors").get(0).get("code").stringValue())
                .isEqualTo("url_invalid");

        Answer name = post("/v1/webhook-endpoints", SHOP, null, "{\"url\":\"https://hooks.example.com/exactly\"}");
        assertThat(name.status()).as(name.text()).isEqualTo(201);
        Answer publicAddress = post("/v1/webhook-endpoints", SHOP, null, "{\"url\":\"https://93.184.215.14/hooks\"}");
        assertThat(publicAddress.status()).as(publicAddress.text()).isEqualTo(201);
        assertThat(count("SELECT count(*) FROM payments_webhook_endpoint")).isEqualTo(2);
    }
}
