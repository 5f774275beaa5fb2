package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.SpringBootTest;
import tools.jackson.databind.JsonNode;

/** The checkout page's demo endpoints in demo mode: settings, processor switches, capture counts. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class DemoEndpointsTest extends DefaultServiceTest {

    @Test
    void demoSettingsNameTheDemoKeys() {
        Answer settings = get("/demo/settings", null);
        assertThat(settings.status()).isEqualTo(200);
        JsonNode json = settings.json();
        assertThat(json.get("demo").booleanValue()).isTrue();
        assertThat(json.get("api_keys").get("acme").stringValue()).isEqualTo(ACME);
        assertThat(json.get("api_keys").get("globex").stringValue()).isEqualTo(GLOBEX);
        assertThat(json.get("operator_key").stringValue()).isEqualTo(OPERATOR);
        assertThat(json.get("processor_switches").booleanValue()).isTrue();
    }

    @Test
    void thePageAndItsSettingsArePublicAndTheSwitchesAreNot() {
        assertThat(get("/demo/settings", null).status()).isEqualTo(200);
        assertThat(get("/", null).text()).contains("Upgrade subscription").contains("/js/checkout.js");
        for (String file :
                new String[] {"/index.html", "/js/exactly-client.js", "/js/checkout.js", "/assets/checkout.css"}) {
            Answer a = get(file, null);
            assertThat(a.status()).as(file).isEqualTo(200);
            assertThat(a.text()).as(file).isNotBlank();
        }
        assertThat(get("/js/exactly-client.js", null).text()).contains("export class ExactlyClient");
        Answer postSettings = post("/demo/settings", null, null, "{}");
        assertThat(postSettings.status()).as("only GET is public").isBetween(400, 499);
        assertThat(get("/v1/demo/processor", OPERATOR).status())
                .as("the operator key does not act for a tenant")
                .isEqualTo(403);
        assertThat(put(OPERATOR, "{\"slow\":true,\"drop_response\":true}").status())
                .isEqualTo(403);
        assertThat(psp().faults().latency()).isZero();
    }

    @Test
    void theSwitchesSetTheProcessorsFaults() {
        assertThat(get("/v1/demo/processor", ACME).json().get("slow").booleanValue())
                .isFalse();
        Answer set = put(ACME, "{\"slow\":true,\"drop_response\":true}");
        assertThat(set.status()).as(set.text()).isEqualTo(200);
        assertThat(set.json().get("slow").booleanValue()).isTrue();
        assertThat(set.json().get("drop_response").booleanValue()).isTrue();
        assertThat(set.json().get("slow_ms").longValue()).isEqualTo(3000);
        assertThat(psp().faults().latency()).isEqualTo(Duration.ofSeconds(3));
        assertThat(psp().faults().dropResponseRate()).isEqualTo(1.0);

        Answer off = put(GLOBEX, "{\"slow\":false,\"drop_response\":false}");
        assertThat(off.status()).isEqualTo(200);
        assertThat(psp().faults().latency()).isZero();
        assertThat(psp().faults().dropResponseRate()).isZero();
        assertThat(get("/v1/demo/processor", ACME).text()).isEqualTo(off.text());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "[]",
                "null",
                "{",
                "{\"slow\":true}",
                "{\"slow\":1,\"drop_response\":false}",
                "{\"slow\":\"true\",\"drop_response\":false}",
                "{\"slow\":true,\"drop_response\":false,\"latency\":5}"
            })
    void badSwitchesAreAProblemAndChangeNothing(String body) {
        Answer bad = put(ACME, body);
        assertThat(bad.status()).as(bad.text()).isEqualTo(422);
        assertThat(bad.problemType()).isEqualTo("validation-failed");
        assertThat(bad.header("Content-Type")).startsWith("application/problem+json");
        assertThat(psp().faults().latency()).isZero();
    }

    @Test
    void aHugeBodyIsRefusedUnread() {
        // a thousand times the endpoint's 1 KiB, yet within what the server swallows after refusing (2 MiB),
        // so that the connection stays open and the client always reads the refusal: a larger body is cut
        // off with the connection, and a client still sending may then see a reset instead of the answer
        Answer huge = put(ACME, "{\"slow\":true,\"drop_response\":false,\"pad\":\"" + "x".repeat(1_000_000) + "\"}");
        assertThat(huge.status()).isEqualTo(413);
        assertThat(huge.problemType()).isEqualTo("payload-too-large");
        assertThat(psp().faults().latency()).isZero();
    }

    @Test
    void theSwitchesNeedATenantKey() {
        assertThat(get("/v1/demo/processor", null).status()).isEqualTo(401);
        assertThat(put(null, "{\"slow\":true,\"drop_response\":true}").status()).isEqualTo(401);
        assertThat(put("sk_wrong", "{\"slow\":true,\"drop_response\":true}").status())
                .isEqualTo(401);
        assertThat(psp().faults().latency()).isZero();
    }

    @Test
    void captureCountsOfACharge() {
        Answer charge = post("/v1/charges", ACME, "demo-captures-1", charge(1234, "cus_demo_captures"));
        String id = charge.json().get("id").stringValue();
        JsonNode captures = get("/v1/demo/processor/captures/" + id, ACME).json();
        assertThat(captures.get("charge").stringValue()).isEqualTo(id);
        assertThat(captures.get("captures").longValue()).isEqualTo(1);
        assertThat(get("/v1/demo/processor/captures/ch_unknown", ACME)
                        .json()
                        .get("captures")
                        .longValue())
                .isZero();
        assertThat(get("/v1/demo/processor/captures/" + "x".repeat(300), ACME).status())
                .isEqualTo(404);
    }

    private Answer put(String apiKey, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri("/v1/demo/processor"))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(body));
        if (apiKey != null) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        return send(b.build());
    }
}
