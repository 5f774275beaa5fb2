package dev.exactly.payments.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The README's browser helper example (verbatim in {@code static/assets/readme-example.html} of the test
 * resources, which the documentation test checks) runs in Chromium against the service: it pays once,
 * and paying the same order again after a reload is a replay with the same key, not a second charge.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ReadmeBrowserExampleTest extends DemoPageTest {
    private static final Pattern RESULT =
            Pattern.compile("(\\d{3}) (ch_\\S+) replayed=(true|false) attempts=(\\d+) key=(bk_[0-9a-f]{32})");

    @Test
    void theReadmeExamplePaysOnceAndReplaysTheSameOrder() {
        driver.get(uri("/assets/readme-example.html").toString());
        el("pay").click();
        Matcher first = awaitResult();
        assertThat(first.group(1)).isEqualTo("201");
        assertThat(first.group(3)).isEqualTo("false");
        String charge = first.group(2);
        String key = first.group(5);

        driver.navigate().refresh();
        el("pay").click();
        await().atMost(Duration.ofSeconds(20)).until(() -> text("result").contains("replayed=true"));
        Matcher again = awaitResult();
        assertThat(again.group(2)).as("the same charge").isEqualTo(charge);
        assertThat(again.group(5)).as("the same key after a reload").isEqualTo(key);

        assertThat(rows("SELECT id FROM payments_charge WHERE customer = 'cus_42'"))
                .hasSize(1);
        assertThat(psp().captureCount("exactly_" + charge)).isEqualTo(1);
        assertThat(get("/v1/idempotency-keys/" + key, ACME)
                        .json()
                        .get("replay_count")
                        .longValue())
                .isEqualTo(1);
    }

    private Matcher awaitResult() {
        await().atMost(Duration.ofSeconds(20))
                .until(() -> RESULT.matcher(text("result")).matches());
        Matcher m = RESULT.matcher(text("result"));
        assertThat(m.matches()).isTrue();
        return m;
    }
}
