package dev.exactly.payments.browser;

import static org.awaitility.Awaitility.await;

import dev.exactly.payments.ServiceTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Browser tests of the checkout page: the real service (real PostgreSQL, in-process processor stand-in)
 * on a random port, and a fresh headless Chromium per test. Every test leaves a screenshot of the page
 * as it ended in {@code target/screenshots/<test>.png}.
 */
abstract class PageTest extends ServiceTest {
    protected Chromium browser;
    protected ChromeDriver driver;
    private String testName = "page";

    /**
     * A fresh schema, demo mode or not, a quick recovery worker (200 ms sweeps, 2 attempts) and a small
     * connection pool (the test contexts stay open side by side on the shared PostgreSQL).
     */
    protected static void pageProperties(DynamicPropertyRegistry registry, boolean demo) {
        commonProperties(registry, demo ? "pay_page" : "pay_page_live");
        registry.add("exactly.payments.demo", () -> String.valueOf(demo));
        registry.add("exactly.payments.pool-size", () -> "5");
        registry.add("exactly.payments.recovery.interval", () -> "200ms");
        registry.add("exactly.payments.recovery.retry-delay", () -> "200ms");
        registry.add("exactly.payments.recovery.max-attempts", () -> "2");
    }

    @BeforeEach
    void startBrowser(TestInfo info) {
        testName = info.getTestMethod().map(java.lang.reflect.Method::getName).orElse("page");
        browser = Chromium.start();
        driver = browser.driver();
    }

    @AfterEach
    void stopBrowser() {
        if (browser != null) {
            try {
                browser.screenshot(getClass().getSimpleName() + "-" + testName);
            } finally {
                browser.close();
            }
        }
    }

    /** Opens the checkout page and waits until it has loaded its settings, balances and pending intents. */
    protected void openPage() {
        driver.get(uri("/").toString());
        awaitReady();
    }

    protected void awaitReady() {
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> "true".equals(driver.executeScript("return document.body.dataset.ready || ''")));
    }

    protected WebElement el(String id) {
        return driver.findElement(By.id(id));
    }

    protected String text(String id) {
        return el(id).getText();
    }

    protected String state() {
        return el("status").getDomAttribute("data-state");
    }

    protected String log() {
        return text("log");
    }

    protected void setCustomer(String customer) {
        WebElement input = el("customer");
        input.clear();
        input.sendKeys(customer);
    }

    /** Waits for the payment panel to reach {@code wanted}; fails at once on an error or an unknown outcome. */
    protected void awaitState(String wanted, Duration atMost) {
        try {
            await().atMost(atMost)
                    .pollInterval(Duration.ofMillis(100))
                    .failFast(
                            "the page reported an error or an unknown outcome",
                            () -> !wanted.equals(state())
                                    && List.of("error", "unknown", "declined").contains(state()))
                    .until(() -> wanted.equals(state()));
        } catch (RuntimeException | AssertionError e) {
            throw new AssertionError("the page did not reach '" + wanted + "': " + text("status") + "\n" + log(), e);
        }
    }

    /** Flips a demo switch on the page and waits until the service confirmed it. */
    protected void flipSwitch(String id) {
        String before = String.valueOf(el("switches-note").getDomAttribute("data-saved"));
        el(id).click();
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> !before.equals(String.valueOf(el("switches-note").getDomAttribute("data-saved"))));
    }

    /** The helper's stored intents (localStorage), as the page sees them. */
    @SuppressWarnings("unchecked")
    protected List<Map<String, Object>> storedIntents() {
        return (List<Map<String, Object>>) driver.executeScript("""
                const out = [];
                for (let i = 0; i < localStorage.length; i++) {
                  const name = localStorage.key(i);
                  if (name.startsWith('exactly.checkout.intent.')) out.push(JSON.parse(localStorage.getItem(name)));
                }
                return out;""");
    }

    /** Charges of a customer in the service's database. */
    protected List<Map<String, Object>> chargesOf(String customer) {
        return rows("SELECT id, status FROM payments_charge WHERE customer = ?", customer);
    }
}
