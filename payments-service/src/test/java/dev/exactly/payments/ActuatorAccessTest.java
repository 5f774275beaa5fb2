package dev.exactly.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Actuator behind Spring Security: health is public, every other endpoint needs the operator key (a
 * tenant's key is 403, none is 401), whatever the path's spelling; Prometheus scrapes with the operator
 * key and finds every meter the README's panels query.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ActuatorAccessTest extends DefaultServiceTest {
    private static final Pattern METRIC = Pattern.compile("\\b(exactly_idempotency_[a-z_]+)");

    @Test
    void healthIsPublicAndEveryOtherEndpointNeedsTheOperatorKey() {
        assertThat(get("/actuator/health", null).status()).isEqualTo(200);
        for (String path : new String[] {
            "/actuator", "/actuator/prometheus", "/actuator/metrics", "/actuator/env", "/actuator/idempotency/acme/k1"
        }) {
            Answer anonymous = get(path, null);
            assertThat(anonymous.status()).as(path).isEqualTo(401);
            assertThat(anonymous.problemType()).as(path).isEqualTo("unauthorized");
            Answer tenant = get(path, ACME);
            assertThat(tenant.status()).as(path).isEqualTo(403);
            assertThat(tenant.json().get("code").stringValue()).isEqualTo("operator_only");
        }
        // what is not exposed is not there, for the operator either
        assertThat(get("/actuator/env", OPERATOR).status()).isEqualTo(404);
        assertThat(get("/actuator", OPERATOR).status()).isEqualTo(200);
    }

    @Test
    void otherSpellingsOfTheActuatorPathsAreRefusedOrStillNeedTheKey() {
        for (String path : new String[] {
            "/actuator/prometheus/",
            "/actuator//prometheus",
            "/actuator/./prometheus",
            "/actuator/%70rometheus",
            "/actuator;x=1/prometheus",
            "/ACTUATOR/prometheus",
            "/actuator/health/../prometheus"
        }) {
            Answer tenant = get(path, ACME);
            assertThat(tenant.status()).as(path).isIn(400, 403, 404);
            assertThat(tenant.text()).as(path).doesNotContain("exactly_idempotency");
        }
    }

    @Test
    void prometheusScrapesWithTheOperatorKeyEveryMeterTheReadmePanelsQuery() throws IOException {
        String key = "actuator-" + System.nanoTime();
        assertThat(post("/v1/charges", ACME, key, charge(1500, "cus_prom")).status())
                .isEqualTo(201);
        assertThat(post("/v1/charges", ACME, key, charge(1500, "cus_prom")).status())
                .isEqualTo(201);

        Answer scrape = get("/actuator/prometheus", OPERATOR);
        assertThat(scrape.status()).isEqualTo(200);
        assertThat(scrape.header("Content-Type")).startsWith("text/plain");
        String text = scrape.text();
        assertThat(text).contains("exactly_idempotency_claims_total{").contains("route=\"/v1/charges\"");
        assertThat(text).doesNotContain(key).doesNotContain(ACME);

        Set<String> queried = new TreeSet<>();
        Matcher names = METRIC.matcher(Files.readString(Path.of("README.md")));
        while (names.find()) {
            queried.add(names.group(1));
        }
        // store errors are registered with their first failure, by exception type
        queried.remove("exactly_idempotency_store_errors_total");
        assertThat(queried)
                .contains("exactly_idempotency_claims_total", "exactly_idempotency_lease_hold_seconds_bucket");
        assertThat(queried).allSatisfy(name -> assertThat(text).as(name).contains(name + "{"));
    }
}
