package dev.exactly.payments.browser;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import tools.jackson.databind.JsonNode;

/**
 * The browser helper's rules, run inside Chromium on the module the service serves: which answers are
 * retried and which are final, the backoff schedule and Retry-After (seconds and HTTP dates), the attempt
 * and deadline bounds, one key per intent kept across a reload, joined double submits. The server is a
 * scripted {@code fetch} here, so that answers the service never gives (429, an HTTP-date Retry-After)
 * are covered too; {@link CheckoutPageTest} runs the same helper against the real service.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ExactlyClientRulesTest extends DemoPageTest {

    @Test
    void theHelperRetriesWhatIsUndecidedWithTheSameKeyAndStopsOnFinalAnswers() throws IOException {
        driver.get(uri("/").toString());
        awaitReady();
        String script;
        try (InputStream in = getClass().getResourceAsStream("/browser/helper-rules.js")) {
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        JsonNode out = JSON.readTree(String.valueOf(driver.executeAsyncScript(script)));
        assertThat(out.has("failure")).as(out.toString()).isFalse();

        JsonNode retried = out.get("retried");
        assertThat(retried.get("result").get("status").intValue()).isEqualTo(201);
        assertThat(retried.get("result").get("replayed").booleanValue()).isTrue();
        assertThat(retried.get("result").get("attempts").intValue()).isEqualTo(7);
        assertThat(retried.get("calls").intValue()).isEqualTo(7);
        assertThat(retried.get("keys").size()).as("one key for every attempt").isEqualTo(1);
        assertThat(retried.get("bodies").size())
                .as("the same bytes on every attempt")
                .isEqualTo(1);
        assertThat(retried.get("bodies").get(0).stringValue())
                .isEqualTo("{\"amount\":1999,\"currency\":\"usd\",\"customer\":\"cus_1\"}");
        assertThat(retried.get("auth").get(0).stringValue()).isEqualTo("Bearer sk_test");
        // 409 Retry-After 1, 429 Retry-After 7, then the backoff ceilings 2 s, 4 s, 5 s (the cap), 5 s
        assertThat(ints(retried.get("delays"))).containsExactly(1000, 7000, 2000, 4000, 5000, 5000);
        assertThat(retried.get("stored").get("state").stringValue()).isEqualTo("finished");
        assertThat(retried.get("stored").has("Authorization"))
                .as("credentials are never stored")
                .isFalse();

        JsonNode finals = out.get("finals");
        for (String status :
                new String[] {"200", "201", "400", "401", "403", "404", "402", "413", "422", "500", "501"}) {
            JsonNode f = finals.get(status);
            assertThat(f.get("calls").intValue())
                    .as("status " + status + " is final")
                    .isEqualTo(1);
            assertThat(f.get("result").get("status").intValue()).isEqualTo(Integer.parseInt(status));
            assertThat(f.get("state").stringValue()).isEqualTo("finished");
        }

        for (String status : new String[] {"409", "502"}) {
            JsonNode f = out.get("replayedFinals").get(status);
            assertThat(f.get("calls").intValue())
                    .as("a replayed " + status + " is final")
                    .isEqualTo(1);
            assertThat(f.get("result").get("replayed").booleanValue()).isTrue();
            assertThat(f.get("state").stringValue()).isEqualTo("finished");
        }

        for (String status : new String[] {"401", "403", "500"}) {
            JsonNode f = out.get("refusedAfterLoss").get(status);
            assertThat(f.get("result").get("error").stringValue())
                    .as(status + " after a lost attempt")
                    .isEqualTo("OutcomeUnknownError");
            assertThat(f.get("state").stringValue()).isEqualTo("pending");
            assertThat(f.get("calls").intValue()).isEqualTo(2);
        }
        assertThat(out.get("internalError").get("result").get("error").stringValue())
                .isEqualTo("OutcomeUnknownError");
        assertThat(out.get("internalError").get("state").stringValue()).isEqualTo("pending");

        JsonNode accounts = out.get("accounts");
        assertThat(accounts.get("first").get("error").stringValue()).isEqualTo("OutcomeUnknownError");
        assertThat(accounts.get("resumed").get("error").stringValue()).isEqualTo("AccountMismatchError");
        assertThat(accounts.get("again").get("error").stringValue()).isEqualTo("AccountMismatchError");
        assertThat(accounts.get("callsUnderB").intValue())
                .as("nothing sent under another account")
                .isZero();
        assertThat(accounts.get("pendingOfB").intValue()).isZero();
        assertThat(accounts.get("otherOfB").get(0).stringValue()).isEqualTo("order-a");
        assertThat(accounts.get("pendingOfA").get(0).stringValue()).isEqualTo("order-a");
        assertThat(accounts.get("storedWho").booleanValue())
                .as("the credential itself is never stored")
                .isFalse();

        JsonNode full = out.get("fullStorage");
        assertThat(full.get("paid").get("status").intValue()).isEqualTo(201);
        assertThat(full.get("next").get("error").stringValue()).isEqualTo("StorageError");
        assertThat(full.get("paidKept").booleanValue())
                .as("the paid order's key is kept")
                .isTrue();
        assertThat(full.get("calls").intValue())
                .as("nothing sent without a stored key")
                .isEqualTo(1);

        JsonNode reused = out.get("reused");
        assertThat(reused.get("calls").intValue()).isEqualTo(1);
        assertThat(reused.get("result").get("error").stringValue()).isEqualTo("KeyReusedError");

        assertThat(ints(out.get("httpDate").get("delays"))).containsExactly(5000);
        assertThat(out.get("httpDate").get("result").get("status").intValue()).isEqualTo(201);

        JsonNode exhausted = out.get("exhausted");
        assertThat(exhausted.get("first").get("error").stringValue()).isEqualTo("OutcomeUnknownError");
        assertThat(exhausted.get("calls").intValue())
                .as("maxAttempts bounds the loop")
                .isEqualTo(3);
        assertThat(exhausted.get("delays").size()).isEqualTo(2);
        String key = exhausted.get("first").get("key").stringValue();
        assertThat(exhausted.get("pendingBefore").get(0).get("key").stringValue())
                .isEqualTo(key);
        assertThat(exhausted.get("pendingAfterReload").get(0).get("key").stringValue())
                .isEqualTo(key);
        assertThat(exhausted.get("resumedKey").stringValue())
                .as("resumed with the stored key")
                .isEqualTo(key);
        assertThat(exhausted.get("resumedBody").stringValue())
                .isEqualTo(exhausted.get("sentBody").stringValue());
        assertThat(exhausted.get("resumed").get("status").intValue()).isEqualTo(201);
        assertThat(exhausted.get("stateAfter").stringValue()).isEqualTo("finished");

        JsonNode deadline = out.get("deadline");
        assertThat(deadline.get("result").get("error").stringValue()).isEqualTo("OutcomeUnknownError");
        assertThat(deadline.get("calls").intValue())
                .as("a Retry-After past the deadline ends the loop")
                .isEqualTo(1);
        assertThat(deadline.get("delays").size()).isZero();

        JsonNode shortest = out.get("shortest");
        assertThat(shortest.get("shortest").doubleValue()).isEqualTo(950.0);
        assertThat(shortest.get("tooLate").get("result").get("error").stringValue())
                .isEqualTo("OutcomeUnknownError");
        assertThat(shortest.get("tooLate").get("calls").intValue())
                .as("a pause leaving the attempt after it less than a tenth of a whole one ends the loop")
                .isEqualTo(1);
        assertThat(shortest.get("inTime").get("result").get("status").intValue())
                .isEqualTo(201);
        assertThat(shortest.get("inTime").get("calls").intValue()).isEqualTo(2);

        JsonNode join = out.get("join");
        assertThat(join.get("calls").size()).as("two submits, one request").isEqualTo(1);
        assertThat(join.get("inFlight").booleanValue()).isTrue();
        assertThat(join.get("a").get("joined").booleanValue()).isFalse();
        assertThat(join.get("b").get("joined").booleanValue()).isTrue();
        assertThat(join.get("b").get("key").stringValue())
                .isEqualTo(join.get("a").get("key").stringValue());

        assertThat(out.get("mismatch").get("other").get("error").stringValue()).isEqualTo("IntentMismatchError");
        assertThat(out.get("mismatch").get("calls").intValue()).isEqualTo(1);

        JsonNode again = out.get("again");
        assertThat(again.get("two").get("key").stringValue())
                .as("a finished intent keeps its key")
                .isEqualTo(again.get("one").get("key").stringValue());
        assertThat(again.get("two").get("replayed").booleanValue()).isTrue();
        assertThat(again.get("three").get("key").stringValue())
                .as("a new intent, a new key")
                .isNotEqualTo(again.get("one").get("key").stringValue());

        JsonNode backoff = out.get("backoff");
        assertThat(ints(backoff.get("top"))).containsExactly(499, 999, 1999, 3999, 4999, 4999, 4999, 4999, 4999, 4999);
        assertThat(backoff.get("zero").intValue()).isZero();
        assertThat(backoff.get("min").intValue()).isGreaterThanOrEqualTo(0);
        assertThat(backoff.get("max").intValue()).isLessThanOrEqualTo(5000);
        JsonNode defaults = backoff.get("retry");
        assertThat(defaults.get("maxAttempts").intValue()).isEqualTo(6);
        assertThat(defaults.get("baseDelayMs").intValue()).isEqualTo(500);
        assertThat(defaults.get("maxDelayMs").intValue()).isEqualTo(5000);
        assertThat(defaults.get("deadlineMs").intValue()).isEqualTo(30000);
        assertThat(defaults.get("attemptTimeoutMs").intValue()).isEqualTo(10000);

        JsonNode ra = out.get("retryAfter");
        assertThat(ra.get("three").intValue()).isEqualTo(3000);
        assertThat(ra.get("zero").intValue()).isZero();
        for (String unreadable : new String[] {"empty", "absent", "words", "negative", "fraction"}) {
            assertThat(ra.get(unreadable).isNull()).as(unreadable).isTrue();
        }
        assertThat(ra.get("past").intValue()).isZero();
        assertThat(ra.get("date").intValue()).isEqualTo(60000);
        assertThat(ra.get("asctime").intValue()).isEqualTo(9000);

        JsonNode corrupt = out.get("corrupt");
        assertThat(corrupt.get("result").get("error").stringValue()).isEqualTo("StorageError");
        assertThat(corrupt.get("calls").intValue())
                .as("nothing sent under a new key")
                .isZero();
        assertThat(corrupt.get("stored").stringValue()).isEqualTo("{not json");
        assertThat(corrupt.get("forget").stringValue()).isEqualTo("ExactlyError");
        assertThat(corrupt.get("stillPending").intValue()).isEqualTo(1);

        JsonNode expiry = out.get("expiry");
        assertThat(expiry.get("sentFirst").intValue()).isEqualTo(1);
        assertThat(expiry.get("resumed").get("error").stringValue()).isEqualTo("IntentExpiredError");
        assertThat(expiry.get("submitted").get("error").stringValue()).isEqualTo("IntentExpiredError");
        assertThat(expiry.get("afterExpiry").intValue())
                .as("nothing sent a day after the first send")
                .isEqualTo(1);
        assertThat(expiry.get("stillPending").intValue())
                .as("listed, for the caller to settle")
                .isEqualTo(1);
        assertThat(expiry.get("late").get("status").intValue())
                .as("keepPendingMs: Infinity sends it")
                .isEqualTo(201);
        assertThat(expiry.get("lateState").stringValue()).isEqualTo("finished");

        assertThat(out.get("keys").get("a").stringValue())
                .matches("bk_[0-9a-f]{32}")
                .isNotEqualTo(out.get("keys").get("b").stringValue());
    }

    private static int[] ints(JsonNode array) {
        int[] values = new int[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = array.get(i).intValue();
        }
        return values;
    }
}
