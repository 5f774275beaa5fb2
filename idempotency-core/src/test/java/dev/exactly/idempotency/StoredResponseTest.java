package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StoredResponseTest {

    @Test
    void isADefensiveCopy() {
        byte[] body = {1, 2, 3};
        List<String> values = new ArrayList<>(List.of("application/json"));
        Map<String, List<String>> headers = new HashMap<>(Map.of("Content-Type", values));
        StoredResponse response = new StoredResponse(201, headers, body);

        body[0] = 9;
        values.add("text/plain");
        headers.put("X-Other", List.of("x"));
        response.body()[1] = 9;

        assertThat(response.body()).containsExactly(1, 2, 3);
        assertThat(response.headers()).containsOnlyKeys("content-type");
        assertThat(response.headers().get("content-type")).containsExactly("application/json");
        assertThatThrownBy(() -> response.headers().put("x", List.of()))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void headersGivenAsPairsMakeTheResponseTheirMapMakes() {
        String[] pairs = {
            "Location",
            "/v1/charges/ch_1",
            "Link",
            "<a>",
            "Content-Type",
            "application/json",
            "LINK",
            "<b>",
            "link",
            "<c>",
            "Set-Cookie",
            ""
        };
        byte[] body = {1, 2};
        StoredResponse fromPairs = StoredResponse.ofHeaderPairs(201, pairs, body);

        Map<String, List<String>> map = new LinkedHashMap<>();
        map.put("Location", List.of("/v1/charges/ch_1"));
        map.put("Link", List.of("<a>"));
        map.put("Content-Type", List.of("application/json"));
        map.put("LINK", List.of("<b>"));
        map.put("link", List.of("<c>"));
        map.put("Set-Cookie", List.of(""));
        assertThat(fromPairs)
                .isEqualTo(new StoredResponse(201, map, body))
                .hasSameHashCodeAs(new StoredResponse(201, map, body));
        assertThat(fromPairs.headers().keySet()).containsExactly("location", "link", "content-type", "set-cookie");
        assertThat(fromPairs.headers().get("link")).containsExactly("<a>", "<b>", "<c>");

        pairs[1] = "/elsewhere";
        body[0] = 9;
        assertThat(fromPairs.headers().get("location")).as("copied").containsExactly("/v1/charges/ch_1");
        assertThat(fromPairs.body()).containsExactly(1, 2);
    }

    @Test
    void manyHeadersGivenAsPairsMergeAsTheirMapDoes() {
        String[] pairs = new String[2 * 60];
        Map<String, List<String>> map = new LinkedHashMap<>();
        for (int i = 0; i < 60; i++) {
            String name = "X-H" + (i % 25);
            pairs[2 * i] = i % 2 == 0 ? name : name.toUpperCase(java.util.Locale.ROOT);
            pairs[2 * i + 1] = "v" + i;
            map.computeIfAbsent(name.toLowerCase(java.util.Locale.ROOT), n -> new ArrayList<>())
                    .add("v" + i);
        }
        StoredResponse fromPairs = StoredResponse.ofHeaderPairs(200, pairs, new byte[0]);
        assertThat(fromPairs).isEqualTo(new StoredResponse(200, map, new byte[0]));
        assertThat(fromPairs.headers()).hasSize(25);
        assertThat(fromPairs.headers().get("x-h3")).containsExactly("v3", "v28", "v53");
    }

    @Test
    void theValuesOfANameThatComesAgainGatherInOrder() {
        String[] pairs = {
            "set-cookie",
            "a",
            "set-cookie",
            "b",
            "set-cookie",
            "c",
            "x",
            "1",
            "set-cookie",
            "d",
            "Set-Cookie",
            "e",
            "x",
            "2"
        };
        StoredResponse fromPairs = StoredResponse.ofHeaderPairs(200, pairs, new byte[0]);
        assertThat(fromPairs.headers().keySet()).containsExactly("set-cookie", "x");
        assertThat(fromPairs.headers().get("set-cookie")).containsExactly("a", "b", "c", "d", "e");
        assertThat(fromPairs.headers().get("x")).containsExactly("1", "2");
        assertThat(fromPairs)
                .isEqualTo(new StoredResponse(
                        200,
                        Map.of("set-cookie", List.of("a", "b", "c", "d", "e"), "x", List.of("1", "2")),
                        new byte[0]));

        String[] many = new String[2 * 20_000];
        for (int i = 0; i < 20_000; i++) {
            many[2 * i] = "link";
            many[2 * i + 1] = "<" + i + ">";
        }
        List<String> links =
                StoredResponse.ofHeaderPairs(200, many, new byte[0]).headers().get("link");
        assertThat(links).hasSize(20_000).startsWith("<0>", "<1>").endsWith("<19999>");
        String[] interleaved = new String[2 * 20_000];
        for (int i = 0; i < 20_000; i++) {
            interleaved[2 * i] = i % 2 == 0 ? "Link" : "set-cookie";
            interleaved[2 * i + 1] = Integer.toString(i);
        }
        Map<String, List<String>> both =
                StoredResponse.ofHeaderPairs(200, interleaved, new byte[0]).headers();
        assertThat(both.keySet()).containsExactly("link", "set-cookie");
        assertThat(both.get("set-cookie")).hasSize(10_000).startsWith("1", "3").endsWith("19999");
        assertThatThrownBy(() -> both.get("link").add("x")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> StoredResponse.ofHeaderPairs(200, new String[] {"a", "1", "a", null}, new byte[0]))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void headersAsPairsAreWholePairsWithoutNulls() {
        assertThat(StoredResponse.ofHeaderPairs(204, new String[0], new byte[0]).headers())
                .isEmpty();
        assertThatThrownBy(() -> StoredResponse.ofHeaderPairs(200, new String[] {"a", "b", "c"}, new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("even");
        assertThatThrownBy(() -> StoredResponse.ofHeaderPairs(200, new String[] {"a", null}, new byte[0]))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> StoredResponse.ofHeaderPairs(200, new String[] {null, "b"}, new byte[0]))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> StoredResponse.ofHeaderPairs(99, new String[0], new byte[0]))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void headerNamesAreCaseInsensitiveAndMerged() {
        StoredResponse response =
                new StoredResponse(200, Map.of("Link", List.of("<a>"), "LINK", List.of("<b>")), new byte[0]);
        assertThat(response.headers().get("link")).containsExactlyInAnyOrder("<a>", "<b>");
    }

    @Test
    void keepsTheHeadersInTheirOrderMergingNamesThatDifferInCaseWhereTheFirstStood() {
        Map<String, List<String>> given = new LinkedHashMap<>();
        given.put("Location", List.of("/v1/charges/ch_1"));
        given.put("Link", List.of("<a>"));
        given.put("Content-Type", List.of("application/json"));
        given.put("LINK", List.of("<b>", "<c>"));
        StoredResponse response = new StoredResponse(201, given, new byte[0]);

        assertThat(response.headers().keySet()).containsExactly("location", "link", "content-type");
        assertThat(response.headers().get("link")).containsExactly("<a>", "<b>", "<c>");
        assertThat(response.headers().get("Link")).isNull();
        assertThat(response.headers())
                .containsKey("content-type")
                .doesNotContainKey("x-absent")
                .hasSize(3);
        List<String> seen = new ArrayList<>();
        response.headers().forEach((name, values) -> seen.add(name + "=" + values));
        assertThat(seen)
                .containsExactly(
                        "location=[/v1/charges/ch_1]", "link=[<a>, <b>, <c>]", "content-type=[application/json]");

        Map<String, List<String>> same = new LinkedHashMap<>();
        same.put("content-type", List.of("application/json"));
        same.put("location", List.of("/v1/charges/ch_1"));
        same.put("link", List.of("<a>", "<b>", "<c>"));
        assertThat(response.headers()).isEqualTo(same).hasSameHashCodeAs(same);
        assertThat(same).isEqualTo(response.headers());
        assertThat(new StoredResponse(201, response.headers(), new byte[0])).isEqualTo(response);
        assertThat(new StoredResponse(201, same, new byte[0])).isEqualTo(response);
    }

    @Test
    void mergesAndOrdersManyHeadersAsFew() {
        Map<String, List<String>> given = new LinkedHashMap<>();
        for (int i = 0; i < 40; i++) {
            given.put("X-H" + i, List.of("v" + i));
        }
        for (int i = 0; i < 40; i += 3) {
            given.put("x-h" + i, List.of("w" + i));
        }
        Map<String, List<String>> headers = new StoredResponse(200, given, new byte[0]).headers();

        assertThat(headers).hasSize(40);
        assertThat(headers.keySet()).first().isEqualTo("x-h0");
        assertThat(headers.keySet()).last().isEqualTo("x-h39");
        assertThat(headers.get("x-h3")).containsExactly("v3", "w3");
        assertThat(headers.get("x-h4")).containsExactly("v4");
    }

    @Test
    void keepsEveryHeaderOfAMapThatHasMoreThanItsSizeSaid() {
        // a map that grew while it was read: its size said one, its entries were three
        Map<String, List<String>> growing = new AbstractMap<>() {
            @Override
            public Set<Map.Entry<String, List<String>>> entrySet() {
                Map<String, List<String>> all = new LinkedHashMap<>();
                all.put("Location", List.of("/a"));
                all.put("ETag", List.of("\"1\""));
                all.put("Link", List.of("<b>"));
                return all.entrySet();
            }

            @Override
            public int size() {
                return 1;
            }
        };
        assertThat(new StoredResponse(200, growing, new byte[0]).headers().keySet())
                .containsExactly("location", "etag", "link");
    }

    @Test
    void noHeadersAndOneHeaderAreHeadersToo() {
        assertThat(StoredResponse.of(204, new byte[0]).headers()).isEmpty();
        assertThat(new StoredResponse(204, new HashMap<>(), new byte[0]).headers())
                .isEqualTo(Map.of());
        Map<String, List<String>> one =
                new StoredResponse(200, Map.of("ETag", List.of("\"1\"")), new byte[0]).headers();
        assertThat(one).isEqualTo(Map.of("etag", List.of("\"1\""))).hasToString("{etag=[\"1\"]}");
    }

    @Test
    void theHeadersCannotBeChangedThroughAnyView() {
        Map<String, List<String>> headers =
                new StoredResponse(200, Map.of("Content-Type", List.of("application/json")), new byte[0]).headers();

        assertThatThrownBy(() -> headers.put("x", List.of())).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> headers.remove("content-type")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> headers.remove("absent")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(headers::clear).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> headers.putAll(Map.of("x", List.of())))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> headers.replaceAll((k, v) -> List.of()))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> headers.keySet().remove("content-type"))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> headers.entrySet().iterator().next().setValue(List.of()))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> {
                    Iterator<Map.Entry<String, List<String>>> entries =
                            headers.entrySet().iterator();
                    entries.next();
                    entries.remove();
                })
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> headers.get("content-type").add("text/plain"))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(headers).containsOnlyKeys("content-type");
        assertThat(headers.get("content-type")).containsExactly("application/json");
    }

    @Test
    void equalityIsByValue() {
        assertThat(StoredResponse.of(200, new byte[] {1}))
                .isEqualTo(StoredResponse.of(200, new byte[] {1}))
                .hasSameHashCodeAs(StoredResponse.of(200, new byte[] {1}))
                .isNotEqualTo(StoredResponse.of(200, new byte[] {2}));
    }
}
