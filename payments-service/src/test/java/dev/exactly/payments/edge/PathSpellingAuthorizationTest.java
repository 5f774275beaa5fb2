package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.payments.ServiceTest;
import dev.exactly.psp.FaultSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Access is decided on the path the dispatcher routes. Every protected path is sent in more than 30
 * spellings (see {@link PathSpellings}) by four callers — no key, the owning tenant, another tenant, the
 * operator — over a raw socket, so nothing normalises the path on the way. Only the right caller may get
 * a 2xx; every other answer is 400, 401, 403, 404 or 405 as a problem document; nothing is ever 5xx or
 * the container's own page; a caller without a key never gets past 401 (or 400 for a path the firewall
 * refuses); and the actions the wrong callers tried did not happen.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PathSpellingAuthorizationTest extends ServiceTest {
    private static final Set<Integer> REFUSALS = Set.of(400, 401, 403, 404, 405);

    enum Who {
        NONE(null),
        ACME_TENANT(ACME),
        OTHER_TENANT(GLOBEX),
        OPERATOR_KEY(OPERATOR);

        final @Nullable String key;

        Who(@Nullable String key) {
            this.key = key;
        }
    }

    private String retryTarget;
    private String resolveTarget;
    private String acmeCharge;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_paths");
        // a lease of a few seconds: one of 1 s was seen to run out under a heavily loaded machine during set-up
        registry.add("exactly.payments.lease", () -> "3s");
        registry.add("exactly.payments.processor.request-timeout", () -> "1s");
        registry.add("exactly.payments.recovery.interval", () -> "100ms");
        registry.add("exactly.payments.recovery.retry-delay", () -> "100ms");
        registry.add("exactly.payments.recovery.max-attempts", () -> "1");
    }

    @BeforeAll
    void deadLettersAndACharge() {
        psp().setFaults(FaultSettings.custom().errorRate(1.0).build());
        retryTarget = deadLetter("paths-dead-1", 700);
        resolveTarget = deadLetter("paths-dead-2", 800);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> chargeStatus(retryTarget).equals("dead_lettered")
                        && chargeStatus(resolveTarget).equals("dead_lettered"));
        psp().clearFaults();
        Answer ok = post("/v1/charges", ACME, "paths-ok", charge(900, "cus_paths"));
        assertThat(ok.status()).as(ok.text()).isEqualTo(201);
        acmeCharge = ok.json().get("id").stringValue();
    }

    private String deadLetter(String key, long amount) {
        Answer failed = post("/v1/charges", ACME, key, charge(amount, "cus_paths"));
        assertThat(failed.status()).as(failed.text()).isEqualTo(409);
        assertThat(failed.problemType()).isEqualTo("payment-dead-lettered");
        return failed.json().get("charge").stringValue();
    }

    @Test
    void operatorEndpointsAnswerOnlyTheOperatorKey() {
        List<String> violations = new ArrayList<>();
        Who[] wrongFirst = {Who.NONE, Who.ACME_TENANT, Who.OTHER_TENANT};
        for (Who who : wrongFirst) {
            check(violations, "GET", "/v1/operator/requests", "", who, Who.OPERATOR_KEY);
            check(violations, "POST", "/v1/operator/requests/" + retryTarget + "/retry", "", who, Who.OPERATOR_KEY);
            check(
                    violations,
                    "POST",
                    "/v1/operator/requests/" + resolveTarget + "/resolve",
                    "{\"outcome\":\"failed\",\"reason\":\"by an attacker\"}",
                    who,
                    Who.OPERATOR_KEY);
        }
        assertThat(violations).as("answers to callers without the operator key").isEmpty();
        // none of their attempts did anything
        assertThat(chargeStatus(retryTarget)).isEqualTo("dead_lettered");
        assertThat(chargeStatus(resolveTarget)).isEqualTo("dead_lettered");
        assertThat(psp().captureCount("exactly_" + retryTarget)).isZero();

        check(violations, "GET", "/v1/operator/requests", "", Who.OPERATOR_KEY, Who.OPERATOR_KEY);
        check(
                violations,
                "POST",
                "/v1/operator/requests/" + retryTarget + "/retry",
                "",
                Who.OPERATOR_KEY,
                Who.OPERATOR_KEY);
        assertThat(violations).as("answers to the operator").isEmpty();
        assertThat(chargeStatus(retryTarget))
                .as("the operator's own retry went through")
                .isEqualTo("succeeded");
        assertThat(psp().captureCount("exactly_" + retryTarget)).isEqualTo(1);
    }

    @Test
    void aTenantsChargeAnswersOnlyThatTenant() {
        List<String> violations = new ArrayList<>();
        for (Who who : Who.values()) {
            check(violations, "GET", "/v1/charges/" + acmeCharge, "", who, Who.ACME_TENANT);
            check(
                    violations,
                    "GET",
                    "/v1/ledger/trial-balance",
                    "",
                    who,
                    who == Who.OTHER_TENANT ? Who.OTHER_TENANT : Who.ACME_TENANT);
        }
        assertThat(violations).isEmpty();
    }

    @Test
    void thereAreEnoughSpellings() {
        assertThat(PathSpellings.of("/v1/operator/requests")).hasSizeGreaterThanOrEqualTo(30);
        assertThat(PathSpellings.of("/v1/charges/ch_1")).hasSizeGreaterThanOrEqualTo(30);
    }

    /** Sends every spelling of {@code path} as {@code who}; records each answer that breaks a rule. */
    private void check(List<String> violations, String method, String path, String body, Who who, Who rightful) {
        int passed = 0;
        for (String spelling : PathSpellings.of(path)) {
            List<String> headers = new ArrayList<>();
            if (who.key != null) {
                headers.add("Authorization: Bearer " + who.key);
            }
            if (method.equals("POST")) {
                headers.add("Content-Type: application/json");
            }
            RawHttp.Response r = RawHttp.send(
                    port,
                    method + " " + spelling + " HTTP/1.1\r\nHost: localhost"
                            + (headers.isEmpty() ? "" : "\r\n" + String.join("\r\n", headers)),
                    body.getBytes(StandardCharsets.UTF_8));
            String where = who + " " + method + " " + spelling + " -> " + r;
            if (r.status() >= 500) {
                violations.add("5xx: " + where);
            }
            if (r.status() >= 400 && !r.isProblem()) {
                violations.add("not a problem document: " + where);
            }
            if (r.text().contains("Tomcat")
                    || r.text().toLowerCase(java.util.Locale.ROOT).contains("<html")) {
                violations.add("container page: " + where);
            }
            if (who != rightful && !REFUSALS.contains(r.status())) {
                violations.add("not refused: " + where);
            }
            if (who == Who.NONE && r.status() != 401 && r.status() != 400) {
                violations.add("unauthenticated but not 401/400: " + where);
            }
            if (r.status() < 300) {
                passed++;
            }
        }
        if (who == rightful && passed == 0) {
            violations.add(who + " never got through to " + method + " " + path);
        }
    }
}
