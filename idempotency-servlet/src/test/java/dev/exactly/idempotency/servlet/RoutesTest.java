package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.IdempotencyPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RoutesTest {
    private final IdempotentRoute charges = IdempotentRoute.post("/v1/charges");
    private final IdempotentRoute refunds = IdempotentRoute.post("/v1/charges/{id}/refunds");
    private final IdempotentRoute put = IdempotentRoute.of("PUT", "/v1/charges/{id}");
    private final RouteTable table = new RouteTable(List.of(charges, refunds, put));

    @Test
    void matchesLiteralAndVariableSegmentsByMethod() {
        assertThat(table.match("POST", "/v1/charges")).isEqualTo(charges);
        assertThat(table.match("POST", "/v1/charges/"))
                .as("one trailing slash is the same path")
                .isEqualTo(charges);
        assertThat(table.match("POST", "/v1/charges;jsessionid=1")).isEqualTo(charges);
        assertThat(table.match("POST", "/v1/charges/ch_1/refunds")).isEqualTo(refunds);
        assertThat(table.match("PUT", "/v1/charges/ch_1")).isEqualTo(put);
        assertThat(table.match("GET", "/v1/charges")).isNull();
        assertThat(table.match("post", "/v1/charges"))
                .as("methods are case-sensitive")
                .isNull();
        assertThat(table.match("POST", "/v1/charges//refunds"))
                .as("a variable needs a segment")
                .isNull();
        assertThat(table.match("POST", "/v1/charges/ch_1/refunds/x")).isNull();
        assertThat(table.match("POST", "/v1")).isNull();
        assertThat(table.match("POST", "/V1/charges")).isNull();
        assertThat(new RouteTable(List.of(IdempotentRoute.post("/"))).match("POST", "/"))
                .isNotNull();
    }

    @Test
    void theInPlaceScanAgreesWithSplittingThePath() {
        List<String> templates =
                List.of("/", "/v1", "/v1/charges", "/v1/charges/{id}", "/v1/charges/{id}/refunds", "/{a}/{b}", "/{a}");
        String[] parts = {"", "v1", "charges", "ch_1", "refunds", "x;p=1", ";p", "V1", "charges;a=b;c"};
        List<String> paths = new ArrayList<>(List.of("/"));
        List<String> previous = List.of("");
        for (int depth = 1; depth <= 4; depth++) {
            List<String> next = new ArrayList<>();
            for (String prefix : previous) {
                for (String part : parts) {
                    next.add(prefix + "/" + part);
                }
            }
            paths.addAll(next);
            next.forEach(p -> paths.add(p + "/"));
            previous = next;
        }
        int matched = 0;
        for (String template : templates) {
            String[] compiled = IdempotentRoute.segments(template);
            for (String path : paths) {
                boolean expected = bySplitting(compiled, path);
                assertThat(RouteTable.matches(compiled, path))
                        .as(template + " against " + path)
                        .isEqualTo(expected);
                matched += expected ? 1 : 0;
            }
        }
        assertThat(matched).as("the cases include matches").isGreaterThan(100);
    }

    /** The definition: split the path into segments, strip each one's path parameters, compare. */
    private static boolean bySplitting(String[] template, String path) {
        String[] segments = IdempotentRoute.segments(path);
        if (template.length != segments.length) {
            return false;
        }
        for (int i = 0; i < template.length; i++) {
            int semicolon = segments[i].indexOf(';');
            String segment = semicolon < 0 ? segments[i] : segments[i].substring(0, semicolon);
            if (IdempotentRoute.isVariable(template[i]) ? segment.isEmpty() : !template[i].equals(segment)) {
                return false;
            }
        }
        return true;
    }

    @Test
    void routesValidateTheirTemplateAndMethod() {
        assertThatThrownBy(() -> IdempotentRoute.post("v1/charges")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> IdempotentRoute.post("/v1//charges")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> IdempotentRoute.post("/v1/{id")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> IdempotentRoute.post("/v1/x{id}")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> IdempotentRoute.of("post", "/v1")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void builderDefaultsAndCopies() {
        IdempotencyPolicy policy =
                IdempotencyPolicy.custom().lease(Duration.ofSeconds(5)).build();
        IdempotentRoute route = IdempotentRoute.builder("POST", "/v1/payouts")
                .keyRequired(false)
                .policy(policy)
                .recordServerErrors(true)
                .build();

        assertThat(charges.keyRequired()).isTrue();
        assertThat(charges.recordServerErrors()).isFalse();
        assertThat(charges.policy()).isEqualTo(IdempotencyPolicy.ofDefaults());
        assertThat(IdempotentRoute.from(route).build()).isEqualTo(route);
        assertThat(IdempotentRoute.from(route).keyRequired(true).build().keyRequired())
                .isTrue();
    }

    @Test
    void theDenyListWinsOverTheAllowList() {
        HeaderPolicy policy =
                new HeaderPolicy(List.of("Set-Cookie", "Authorization", "X-Trace", "X-Token"), List.of("x-token"));

        assertThat(policy.allowed())
                .contains("content-type", "location", "etag", "cache-control", "link", "content-language", "x-trace");
        assertThat(policy.stored("SET-COOKIE")).isFalse();
        assertThat(policy.stored("Authorization")).isFalse();
        assertThat(policy.stored("X-Token")).isFalse();
        assertThat(policy.stored("WWW-Authenticate")).isFalse();
        assertThat(policy.stored("Proxy-Authorization")).isFalse();
        assertThat(policy.stored("Cookie")).isFalse();
        assertThat(policy.stored("Content-Length")).isFalse();
        assertThat(policy.stored("X-Unlisted")).isFalse();
        assertThat(policy.stored("ETag")).isTrue();
    }
}
