package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeaderPolicyTest {

    private final HeaderPolicy policy =
            new HeaderPolicy(List.of("X-Request-Cost", "Authorization"), List.of("X-Api-Key"));

    @Test
    void keepsTheAllowedHeadersInOrderUnderLowerCaseNamesAndDropsTheRest() {
        Map<String, List<String>> kept = policy.filter(List.of(
                new CapturedResponse.Header("Location", List.of("/v1/charges/ch_1")),
                new CapturedResponse.Header("Set-Cookie", List.of("session=1")),
                new CapturedResponse.Header("X-REQUEST-COST", List.of("3")),
                new CapturedResponse.Header("Authorization", List.of("Bearer t")),
                new CapturedResponse.Header("X-Api-Key", List.of("k")),
                new CapturedResponse.Header("X-Unlisted", List.of("u")),
                new CapturedResponse.Header("Content-Type", List.of("application/json"))));

        assertThat(kept.keySet()).containsExactly("location", "x-request-cost", "content-type");
        assertThat(kept.get("x-request-cost")).containsExactly("3");
    }

    @Test
    void everyResponseNamesItsHeadersWithThePolicysOwnStrings() {
        String first = policy.filter(List.of(new CapturedResponse.Header("Content-Type", List.of("a/b"))))
                .keySet()
                .iterator()
                .next();
        String second = policy.filter(List.of(new CapturedResponse.Header("CONTENT-TYPE", List.of("a/b"))))
                .keySet()
                .iterator()
                .next();

        assertThat(first).isEqualTo("content-type").isSameAs(second);
    }

    @Test
    void everySpellingOfAnAllowedNameIsKeptAndOfADeniedOneDropped() {
        for (String spelling : List.of("etag", "Etag", "ETag", "ETAG", "eTaG")) {
            assertThat(policy.filter(List.of(new CapturedResponse.Header(spelling, List.of("\"v1\"")))))
                    .as(spelling)
                    .containsOnlyKeys("etag");
        }
        for (String spelling : List.of("x-request-cost", "X-Request-Cost", "x-Request-cost")) {
            assertThat(policy.filter(List.of(new CapturedResponse.Header(spelling, List.of("3")))))
                    .as(spelling)
                    .containsOnlyKeys("x-request-cost");
        }
        for (String spelling : List.of("x-api-key", "X-Api-Key", "X-API-KEY", "authorization", "Authorization")) {
            assertThat(policy.filter(List.of(new CapturedResponse.Header(spelling, List.of("secret")))))
                    .as(spelling)
                    .isEmpty();
        }
    }

    @Test
    void titleCaseCapitalisesEachWord() {
        assertThat(HeaderPolicy.titleCase("content-type")).isEqualTo("Content-Type");
        assertThat(HeaderPolicy.titleCase("etag")).isEqualTo("Etag");
        assertThat(HeaderPolicy.titleCase("x-1a-b")).isEqualTo("X-1a-B");
        assertThat(HeaderPolicy.titleCase("a--b-")).isEqualTo("A--B-");
    }
}
