package dev.exactly.payments.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.http.HttpRequest;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Outside demo mode the page knows no key: it asks for one, shows no demo switches, and the demo
 * endpoints say nothing beyond {@code {"demo":false}}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
class NonDemoPageTest extends PageTest {
    private static final String SHOP = "sk_live_shop_7f3a";
    private static final String OPS = "sk_ops_9c1d";

    @DynamicPropertySource
    static void liveProperties(DynamicPropertyRegistry registry) {
        pageProperties(registry, false);
        registry.add("exactly.payments.api-key-list", () -> SHOP + "=shop");
        registry.add("exactly.payments.operator-key", () -> OPS);
    }

    @Test
    void theDemoEndpointsExposeNothingOutsideDemoMode() {
        Answer settings = get("/demo/settings", null);
        assertThat(settings.status()).isEqualTo(200);
        assertThat(settings.text()).isEqualTo("{\"demo\":false}");
        assertThat(settings.header("Cache-Control")).contains("no-store");
        assertThat(get("/demo/settings", SHOP).text()).isEqualTo("{\"demo\":false}");
        assertThat(get("/v1/demo/processor", SHOP).status()).isEqualTo(404);
        assertThat(get("/v1/demo/processor/captures/ch_abc", SHOP).status()).isEqualTo(404);
        Answer put = send(HttpRequest.newBuilder(uri("/v1/demo/processor"))
                .header("Authorization", "Bearer " + SHOP)
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"slow\":true,\"drop_response\":true}"))
                .build());
        assertThat(put.status()).isEqualTo(404);
        assertThat(psp().faults().latency()).as("the processor was not touched").isZero();
        assertThat(psp().faults().dropResponseRate()).isZero();
        assertThat(get("/v1/demo/processor", null).status()).isEqualTo(401);
        assertThat(get("/v1/demo/processor", "sk_demo_acme").status())
                .as("no demo keys")
                .isEqualTo(401);
    }

    @Test
    void thePageAsksForAKeyAndPaysWithTheOneEntered() {
        openPage();
        assertThat(el("mode").getDomAttribute("data-demo")).isEqualTo("false");
        assertThat(el("api-key").getDomProperty("value")).isEmpty();
        assertThat(el("operator-key").getDomProperty("value")).isEmpty();
        assertThat(el("switches").isDisplayed()).as("no demo switches").isFalse();
        assertThat(text("ops-note")).contains("Enter the operator key");

        el("pay").click();
        assertThat(state()).isEqualTo("error");
        assertThat(text("status")).contains("Enter an API key");
        assertThat(chargesOf("cus_live")).isEmpty();

        el("api-key").sendKeys(SHOP);
        el("api-key-save").click();
        setCustomer("cus_live");
        el("pay").click();
        awaitState("paid", Duration.ofSeconds(30));

        String charge = text("charge-id");
        assertThat(chargesOf("cus_live"))
                .singleElement()
                .satisfies(row -> assertThat(row).containsEntry("id", charge));
        assertThat(psp().captureCount("exactly_" + charge)).isEqualTo(1);
        assertThat(text("captures")).contains("not shown");
        await().atMost(Duration.ofSeconds(10)).until(() -> text("balance").equals("$19.99"));
        assertThat(driver.executeScript("return sessionStorage.getItem('exactly.checkout.api-key')"))
                .isEqualTo(SHOP);
        assertThat(String.valueOf(driver.executeScript("return JSON.stringify(localStorage)")))
                .as("the API key is never kept beyond the tab")
                .doesNotContain(SHOP);

        el("operator-key").sendKeys(OPS);
        el("ops-refresh").click();
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        text("ops-dead").contains("none") && text("ops-note").isEmpty());
    }
}
