package dev.exactly.payments.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.psp.FaultKind;
import dev.exactly.psp.FaultSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.interactions.Actions;
import org.springframework.boot.test.context.SpringBootTest;
import tools.jackson.databind.JsonNode;

/**
 * The checkout page in headless Chromium against the real service: the failures a customer meets (a
 * double-click, a reload while the processor is slow, a response lost after the money moved, the network
 * going away) each end in one charge and one capture, and the page says what happened. Checked on the page
 * and in the service's database and the processor's capture log.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class CheckoutPageTest extends DemoPageTest {

    @Test
    void aDoubleClickChargesOnce() {
        openPage();
        setCustomer("cus_double_click");
        flipSwitch("switch-slow");
        assertThat(psp().faults().latency())
                .as("the page slowed the processor down")
                .isEqualTo(Duration.ofSeconds(3));

        new Actions(driver).doubleClick(el("pay")).perform();
        awaitState("paid", Duration.ofSeconds(30));

        String charge = text("charge-id");
        String key = text("idem-key");
        assertThat(log()).contains("joined the payment in flight");
        assertThat(text("attempts")).as("one request for two clicks").isEqualTo("1");
        assertThat(el("replayed").getDomAttribute("data-replayed")).isEqualTo("false");
        assertOneChargeAndOneCapture("cus_double_click", charge);
        JsonNode status = get("/v1/idempotency-keys/" + key, ACME).json();
        assertThat(status.get("replay_count").longValue())
                .as("the second click never reached the service")
                .isZero();
        assertThat(status.get("resource").get("id").stringValue()).isEqualTo(charge);
        assertMoneyShown("$19.99");
        await().atMost(Duration.ofSeconds(10)).until(() -> text("ops-keys").contains(key));
    }

    @Test
    void theDoubleClickSwitchSubmitsEveryClickTwiceAndChargesOnce() {
        openPage();
        setCustomer("cus_double_switch");
        el("plan").findElement(By.cssSelector("option[value=team]")).click();
        flipSwitch("switch-slow");
        el("switch-double").click();

        el("pay").click();
        awaitState("paid", Duration.ofSeconds(30));

        String charge = text("charge-id");
        assertThat(log()).contains("joined the payment in flight");
        assertThat(text("attempts")).isEqualTo("1");
        assertThat(text("charge-amount")).isEqualTo("$49.00");
        assertOneChargeAndOneCapture("cus_double_switch", charge);
        assertThat(get("/v1/idempotency-keys/" + text("idem-key"), ACME)
                        .json()
                        .get("replay_count")
                        .longValue())
                .isZero();
    }

    @Test
    void aReloadWhileTheProcessorIsSlowResumesWithTheSameKeyAndChargesOnce() {
        openPage();
        setCustomer("cus_reload");
        flipSwitch("switch-slow");

        el("pay").click();
        // the first request is inside the service (its charge row exists) and waits for the slow processor
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> chargesOf("cus_reload").size() == 1);
        String key = text("idem-key");
        List<Map<String, Object>> stored = storedIntents();
        assertThat(stored).hasSize(1);
        assertThat(stored.getFirst()).containsEntry("key", key).containsEntry("state", "pending");
        String body = String.valueOf(((Map<?, ?>) stored.getFirst().get("request")).get("body"));
        String pending = String.valueOf(chargesOf("cus_reload").getFirst().get("id"));
        assertThat(psp().captureCount("exactly_" + pending))
                .as("the processor has not answered yet")
                .isZero();

        driver.navigate().refresh();
        awaitReady();
        awaitState("paid", Duration.ofSeconds(30));

        String charge = text("charge-id");
        assertThat(text("idem-key")).as("the same key after the reload").isEqualTo(key);
        assertThat(log()).contains("resuming upgrade:ord_").contains("resumed after reload");
        assertThat(text("total-attempts"))
                .as("one attempt before the reload, one after")
                .isEqualTo("2");
        assertThat(el("replayed").getDomAttribute("data-replayed"))
                .as("the resumed request got the first request's answer")
                .isEqualTo("true");
        Map<String, Object> after = storedIntents().getFirst();
        assertThat(after).containsEntry("key", key).containsEntry("state", "finished");
        assertThat(((Map<?, ?>) after.get("request")).get("body"))
                .as("the same body after the reload")
                .isEqualTo(body);
        assertOneChargeAndOneCapture("cus_reload", charge);
        JsonNode status = get("/v1/idempotency-keys/" + key, ACME).json();
        assertThat(status.get("replay_count").longValue()).isPositive();
        assertThat(status.get("resource").get("id").stringValue()).isEqualTo(charge);
    }

    @Test
    void aResponseDroppedAfterCaptureEndsWithOneCaptureAndTheChargeShownAsAReplay() {
        openPage();
        setCustomer("cus_dropped");
        flipSwitch("switch-drop");
        assertThat(psp().faults().dropResponseRate()).isEqualTo(1.0);

        el("pay").click();
        awaitState("paid", Duration.ofSeconds(45));

        String charge = text("charge-id");
        assertThat(psp().stats().fired(FaultKind.DROP_RESPONSE))
                .as("the processor dropped the response")
                .isPositive();
        assertThat(log()).contains("answered 503 processor-unavailable").contains("Retry-After");
        assertThat(Integer.parseInt(text("attempts"))).isGreaterThanOrEqualTo(2);
        assertThat(el("replayed").getDomAttribute("data-replayed")).isEqualTo("true");
        assertThat(text("replayed")).startsWith("yes");
        assertOneChargeAndOneCapture("cus_dropped", charge);
        assertMoneyShown("$19.99");
    }

    @Test
    void anOfflineToOnlineTransitionRetriesAndChargesOnce() {
        openPage();
        setCustomer("cus_offline");
        browser.network(true);

        el("pay").click();
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> log().contains("network error"));
        String key = text("idem-key");
        assertThat(chargesOf("cus_offline"))
                .as("nothing reached the service while offline")
                .isEmpty();
        assertThat(storedIntents()).singleElement().satisfies(i -> assertThat(i).containsEntry("key", key));

        browser.network(false);
        awaitState("paid", Duration.ofSeconds(60));

        assertThat(text("idem-key"))
                .as("the retry after the network came back used the same key")
                .isEqualTo(key);
        assertThat(Integer.parseInt(text("attempts"))).isGreaterThanOrEqualTo(2);
        assertThat(el("replayed").getDomAttribute("data-replayed")).isEqualTo("false");
        assertOneChargeAndOneCapture("cus_offline", text("charge-id"));
    }

    @Test
    void aPaidOrderIsNeverSentAgainEvenOnceItsKeyIsForgotten() {
        openPage();
        setCustomer("cus_paid_once");
        el("pay").click();
        awaitState("paid", Duration.ofSeconds(30));
        String charge = text("charge-id");
        String order = text("order-id");

        // what a day later (the helper drops a finished key as the server forgets it) or a clock jump leaves
        driver.executeScript("""
                for (const name of Object.keys(localStorage)) {
                  if (name.startsWith('exactly.checkout.intent.')) localStorage.removeItem(name);
                }""");
        driver.navigate().refresh();
        awaitReady();
        assertThat(text("order-id")).isEqualTo(order);

        el("pay").click();
        await().atMost(Duration.ofSeconds(10)).until(() -> text("status").contains("already paid"));
        assertThat(text("status")).contains(order).contains(charge).contains("nothing was sent");
        assertThat(storedIntents()).as("no key was minted for the paid order").isEmpty();
        assertOneChargeAndOneCapture("cus_paid_once", charge);
    }

    @Test
    void theOperationsViewListsDeadLettersAndRetriesThem() {
        psp().setFaults(FaultSettings.custom().errorRate(1.0).build());
        String dead = post("/v1/charges", ACME, "ops-dead-letter", charge(7700, "cus_ops"))
                .json()
                .get("charge")
                .stringValue();
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> chargeStatus(dead).equals("dead_lettered"));
        psp().clearFaults();

        openPage();
        await().atMost(Duration.ofSeconds(10)).until(() -> text("ops-dead").contains(dead));
        assertThat(text("ops-dead")).contains("cus_ops").contains("$77.00").contains("after 2 attempts");
        el("ops-dead")
                .findElement(By.xpath(".//tr[td[1][normalize-space()='" + dead + "']]//button"))
                .click();

        await().atMost(Duration.ofSeconds(20)).until(() -> text("ops-dead").contains("none"));
        assertThat(log()).contains("operator retry of " + dead + ": 200");
        assertThat(chargeStatus(dead)).isEqualTo("succeeded");
        assertThat(psp().captureCount("exactly_" + dead)).isEqualTo(1);
    }

    private void assertOneChargeAndOneCapture(String customer, String charge) {
        assertThat(chargesOf(customer))
                .singleElement()
                .satisfies(row -> assertThat(row).containsEntry("id", charge).containsEntry("status", "succeeded"));
        assertThat(psp().captureCount("exactly_" + charge))
                .as("captures at the processor")
                .isEqualTo(1);
        assertThat(psp().captures().stream()
                        .filter(c -> c.idempotencyKey().equals("exactly_" + charge))
                        .count())
                .isEqualTo(1);
        assertThat(entriesOf(charge)).as("journal entries").isEqualTo(1);
        assertLedgerBalanced();
        await().atMost(Duration.ofSeconds(10)).until(() -> text("captures").equals("1"));
    }

    private void assertMoneyShown(String balance) {
        await().atMost(Duration.ofSeconds(10)).until(() -> text("balance").equals(balance));
        assertThat(el("trial-balanced").getDomAttribute("data-balanced")).isEqualTo("true");
        assertThat(text("trial-balance")).contains("clearing").contains("total usd");
    }
}
