package dev.exactly.payments.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.psp.Fault;
import dev.exactly.psp.PspOperation;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.interactions.Actions;
import org.springframework.boot.test.context.SpringBootTest;
import tools.jackson.databind.JsonNode;

/**
 * Authorize now, capture later on the checkout page, in headless Chromium against the real service: the
 * hold shows as pending, a double-clicked "Capture" captures once at the processor, "Refund" refunds once
 * however often it is clicked, and the operations card shows the charge's events and a reconciliation
 * without mismatches. Checked on the page, in the service's database and in the processor's books.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class AuthorizeCapturePageTest extends DemoPageTest {

    @Test
    void authorizeThenADoubleClickedCaptureCapturesOnceAndARefundRefundsOnce() {
        openPage();
        setCustomer("cus_auth_page");
        el("authorize-only").click();
        assertThat(text("pay")).isEqualTo("Authorize $19.99");

        el("pay").click();
        awaitState("authorized", Duration.ofSeconds(30));
        String charge = text("charge-id");
        assertThat(text("charge-status")).startsWith("authorized");
        assertThat(chargesOf("cus_auth_page"))
                .singleElement()
                .satisfies(row -> assertThat(row).containsEntry("id", charge).containsEntry("status", "authorized"));
        String processorCharge = get("/v1/charges/" + charge, ACME)
                .json()
                .get("processor_charge")
                .stringValue();
        assertThat(capturesAtProcessor(processorCharge))
                .as("an authorization captures nothing")
                .isZero();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> text("balance").equals("$0.00")
                        && text("balance-pending").equals("$19.99"));
        assertThat(el("void").isDisplayed()).isTrue();
        assertThat(el("refund").isDisplayed()).isFalse();

        // the processor takes 2 s over this capture, so the second click surely lands while the first is in flight
        psp().failNext(PspOperation.CAPTURE, 1, Fault.latency(Duration.ofSeconds(2)));
        new Actions(driver).doubleClick(el("capture")).perform();
        awaitState("captured", Duration.ofSeconds(30));
        assertThat(log()).as("the second click reached the page").contains("joined the capture in flight");

        assertThat(text("charge-status")).isEqualTo("succeeded");
        assertThat(capturesAtProcessor(processorCharge))
                .as("captures at the processor for two clicks")
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM ledger_entry WHERE external_ref = ?", "capture:" + charge))
                .isEqualTo(1);
        assertThat(chargeStatus(charge)).isEqualTo("succeeded");
        assertLedgerBalanced();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> text("balance").equals("$19.99")
                        && text("balance-pending").equals("$0.00"));
        assertThat(el("trial-balanced").getDomAttribute("data-balanced")).isEqualTo("true");
        List<Map<String, Object>> captureIntents = storedIntents().stream()
                .filter(i -> ("capture:" + charge).equals(i.get("intentId")))
                .toList();
        assertThat(captureIntents)
                .as("one intent, one key for the capture")
                .singleElement()
                .satisfies(i -> assertThat(i).containsEntry("state", "finished"));
        JsonNode captureKey = get(
                        "/v1/idempotency-keys/" + captureIntents.getFirst().get("key"), ACME)
                .json();
        assertThat(captureKey.get("resource").get("object").stringValue()).isEqualTo("capture");
        assertThat(captureKey.get("replay_count").longValue())
                .as("the second click never reached the service")
                .isZero();

        assertThat(el("capture").isDisplayed()).as("nothing left to capture").isFalse();
        el("refund").click();
        awaitState("refunded", Duration.ofSeconds(30));
        String firstAnswer = text("status");
        assertThat(firstAnswer).doesNotContain("replayed");
        el("refund").click();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> "refunded".equals(state()) && text("status").contains("replayed"));

        List<Map<String, Object>> refunds = rows("SELECT id, status FROM payments_refund WHERE charge_id = ?", charge);
        assertThat(refunds)
                .as("one refund for two clicks")
                .singleElement()
                .satisfies(row -> assertThat(row).containsEntry("status", "succeeded"));
        String refund = String.valueOf(refunds.getFirst().get("id"));
        assertThat(processorRefunds(refund)).as("refunds at the processor").isEqualTo(1);
        assertThat(refundEntriesOf(refund)).isEqualTo(1);
        assertThat(text("charge-refunded")).contains("$19.99").contains(refund);
        assertLedgerBalanced();
        await().atMost(Duration.ofSeconds(10)).until(() -> text("balance").equals("$0.00"));

        el("ops-refresh").click();
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> eventShown("charge.succeeded", charge)
                        && eventShown("charge.captured", charge)
                        && eventShown("refund.succeeded", refund));
        assertThat(eventRows("charge.captured", charge))
                .as("one capture event for two clicks")
                .isEqualTo(1);

        // recovery may still be finishing another test's charge: refresh until the books agree
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    String before = String.valueOf(el("recon-summary").getDomAttribute("data-run"));
                    el("ops-refresh").click();
                    await().atMost(Duration.ofSeconds(10))
                            .pollInterval(Duration.ofMillis(50))
                            .until(() -> !before.equals(
                                    String.valueOf(el("recon-summary").getDomAttribute("data-run"))));
                    return "0".equals(el("recon-summary").getDomAttribute("data-mismatches"));
                });
        assertThat(text("recon-summary")).startsWith("no mismatches").contains("in_processor_not_ledger 0");
        assertThat(text("ops-recon")).contains("the processor and the ledger agree");
    }

    private long capturesAtProcessor(String processorCharge) {
        return psp().captures().stream()
                .filter(c -> c.chargeId().equals(processorCharge))
                .count();
    }

    private boolean eventShown(String type, String subject) {
        return eventRows(type, subject) > 0;
    }

    private int eventRows(String type, String subject) {
        return el("ops-events")
                .findElements(By.xpath(".//tr[td[1][normalize-space()='" + type + "'] and td[2][normalize-space()='"
                        + subject + "']]"))
                .size();
    }
}
