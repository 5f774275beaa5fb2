package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.DefaultServiceTest;
import dev.exactly.payments.web.ApiProblems;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import tools.jackson.databind.JsonNode;

/**
 * A validation answer stays small whatever the body holds. Before, every unknown member was an error of its
 * own, its full name echoed: a body of 30 KB naming 3,000 members was answered with 250 KB, and a member
 * name of 20,000 characters came back whole in {@code field}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BoundedErrorsTest extends DefaultServiceTest {

    @Test
    void thousandsOfUnknownMembersGetTheFirstTwentyErrorsAndTheirCount() {
        StringBuilder body = new StringBuilder("{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_many\"");
        for (int i = 1; i <= 3000; i++) {
            body.append(",\"f").append(i).append("\":1");
        }
        body.append('}');
        long charges = count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_many'");

        Answer answer = post("/v1/charges", ACME, "many-unknown", body.toString());

        assertThat(answer.status()).as(answer.text()).isEqualTo(422);
        assertThat(answer.problemType()).isEqualTo("validation-failed");
        JsonNode errors = answer.json().get("errors");
        assertThat(errors.size()).isEqualTo(ApiProblems.MAX_ERRORS);
        List<String> fields = new ArrayList<>();
        errors.forEach(e -> fields.add(e.get("field").stringValue()));
        assertThat(fields).startsWith("f1", "f2", "f3").endsWith("f20");
        assertThat(answer.json().get("detail").stringValue())
                .isEqualTo("the charge request is invalid (the first 20 of 3000 errors are listed)");
        assertThat(answer.body().length)
                .as("an answer far smaller than the body")
                .isLessThan(4_000);
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_many'"))
                .isEqualTo(charges);
    }

    @Test
    void aFewErrorsAreAllListedAndTheDetailIsPlain() {
        Answer answer = post(
                "/v1/charges",
                ACME,
                "few-unknown",
                "{\"amount\":-1,\"currency\":\"usd\",\"customer\":\"cus_few\",\"colour\":\"red\"}");
        assertThat(answer.status()).as(answer.text()).isEqualTo(422);
        assertThat(answer.json().get("errors").size()).isEqualTo(2);
        assertThat(answer.json().get("detail").stringValue()).isEqualTo("the charge request is invalid");
    }

    @Test
    void aLongMemberNameIsEchoedCutInFieldAsInMessage() {
        String name = "n".repeat(20_000);
        Answer unknown = post(
                "/v1/charges",
                ACME,
                "long-unknown",
                "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_long\",\"" + name + "\":1}");
        assertThat(unknown.status()).as(unknown.text()).isEqualTo(422);
        JsonNode error = unknown.json().get("errors").get(0);
        assertThat(error.get("code").stringValue()).isEqualTo("parameter_unknown");
        assertThat(error.get("field").stringValue()).isEqualTo("n".repeat(40) + "...");
        assertThat(error.get("message").stringValue()).isEqualTo("unknown parameter '" + "n".repeat(40) + "...'");
        assertThat(unknown.body().length).isLessThan(1_000);

        Answer twice = post(
                "/v1/charges",
                ACME,
                "long-twice",
                "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_long\",\"" + name + "\":1,\"" + name
                        + "\":2}");
        assertThat(twice.status()).as(twice.text()).isEqualTo(422);
        JsonNode duplicated = twice.json().get("errors").get(0);
        assertThat(duplicated.get("code").stringValue()).isEqualTo("parameter_duplicated");
        assertThat(duplicated.get("field").stringValue()).isEqualTo("n".repeat(40) + "...");
        assertThat(twice.body().length).isLessThan(1_000);
    }

    @Test
    void aNameIsNeverCutBetweenTheTwoHalvesOfACharacter() {
        // 39 ASCII characters, then U+1F600 (two UTF-16 units, the 40th and 41st), then more
        String name = "a".repeat(39) + "\ud83d\ude00" + "b".repeat(10);
        Answer answer = post(
                "/v1/charges",
                ACME,
                "cut-pair",
                "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_pair\",\"" + name + "\":1}");
        assertThat(answer.status()).as(answer.text()).isEqualTo(422);
        assertThat(answer.json().get("errors").get(0).get("field").stringValue())
                .isEqualTo("a".repeat(39) + "...");
        assertThat(answer.text()).doesNotContain("\\ud83d", "\\uD83D");
    }
}
