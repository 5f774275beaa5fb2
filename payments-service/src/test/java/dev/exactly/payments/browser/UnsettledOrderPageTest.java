package dev.exactly.payments.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * What the checkout page does when it cannot know or cannot keep a payment: an order left without a final
 * answer holds back every other order until it has one (a new order would get a new key and could pay a
 * second time), and a browser that refuses to store keys sends nothing and says why.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UnsettledOrderPageTest extends DemoPageTest {

    @Test
    void anOrderWithoutAFinalAnswerHoldsBackAnyOtherOrderUntilItIsAnswered() {
        openPage();
        setCustomer("cus_unsettled");
        browser.network(true);

        el("pay").click();
        await().atMost(Duration.ofSeconds(45))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> "unknown".equals(state()));
        String key = text("idem-key");
        String order = text("order-id");
        assertThat(order).startsWith("ord_");
        assertThat(text("status")).contains("No final answer yet").contains("a new order can start once");
        assertThat(el("order-fields").getDomProperty("disabled"))
                .as("the order cannot be changed")
                .isEqualTo("true");
        assertThat(el("new-order").isEnabled()).as("no new order").isFalse();

        // a customer who gets past the locked form (devtools, an old tab) still cannot start another order
        driver.executeScript("""
                document.getElementById('order-fields').disabled = false;
                const plan = document.getElementById('plan');
                plan.value = 'team';
                plan.dispatchEvent(new Event('change'));""");
        el("pay").click();
        await().atMost(Duration.ofSeconds(5)).until(() -> log().contains("no new order while upgrade:" + order));
        assertThat(text("status")).contains("Order " + order + " has no final answer yet");
        assertThat(text("order-id")).isEqualTo(order);
        driver.executeScript(
                "document.getElementById('new-order').disabled = false; document.getElementById('new-order').click();");
        assertThat(text("order-id")).isEqualTo(order);
        assertThat(storedIntents())
                .as("no second key was minted")
                .singleElement()
                .satisfies(i -> assertThat(i).containsEntry("key", key).containsEntry("state", "pending"));

        // back online, the pending order is asked again with its key, unprompted
        browser.network(false);
        awaitState("paid", Duration.ofSeconds(60));
        assertThat(text("idem-key")).isEqualTo(key);
        assertThat(text("charge-amount"))
                .as("the order that was sent, not the plan picked meanwhile")
                .isEqualTo("$19.99");
        assertThat(chargesOf("cus_unsettled"))
                .singleElement()
                .satisfies(row -> assertThat(row).containsEntry("status", "succeeded"));
        assertThat(el("new-order").isEnabled())
                .as("answered, a new order may start")
                .isTrue();
        assertThat(el("order-fields").getDomProperty("disabled")).isEqualTo("false");
    }

    @Test
    void aBrowserThatRefusesToStoreTheOrderSendsNothingAndSaysSo() {
        onEveryPage("""
                Storage.prototype.setItem = function () {
                  throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
                };""");
        openPage();
        setCustomer("cus_full_storage");

        el("pay").click();
        await().atMost(Duration.ofSeconds(10)).until(() -> "error".equals(state()));
        assertThat(text("status"))
                .contains("could not store the payment, so nothing was sent")
                .contains("quota has been exceeded");
        assertThat(chargesOf("cus_full_storage"))
                .as("nothing reached the service")
                .isEmpty();
    }

    @Test
    void aBrowserWithoutStorageCannotPayAndSaysSo() {
        onEveryPage("""
                for (const name of ['localStorage', 'sessionStorage']) {
                  Object.defineProperty(window, name, {
                    get() { throw new DOMException('Access is denied for this document.', 'SecurityError'); },
                  });
                }
                window.chargesSent = 0;
                const platformFetch = window.fetch;
                window.fetch = (input, init) => {
                  if (String(input).includes('/v1/charges')) window.chargesSent += 1;
                  return platformFetch(input, init);
                };""");
        openPage();

        assertThat(state()).isEqualTo("error");
        assertThat(text("status"))
                .contains("does not let the page store payment keys")
                .contains("Access is denied");
        assertThat(el("pay").isEnabled()).isFalse();
        driver.executeScript(
                "document.getElementById('pay').disabled = false; document.getElementById('order-fields').disabled = false;");
        setCustomer("cus_no_storage");
        el("pay").click();
        assertThat(driver.executeScript("return window.chargesSent"))
                .as("nothing was sent")
                .isEqualTo(0L);
        assertThat(state()).as("the click changed nothing").isEqualTo("error");
        assertThat(chargesOf("cus_no_storage")).isEmpty();
    }

    /** Runs {@code script} in every document before the page's own scripts. */
    private void onEveryPage(String script) {
        driver.executeCdpCommand("Page.addScriptToEvaluateOnNewDocument", Map.of("source", script));
    }
}
