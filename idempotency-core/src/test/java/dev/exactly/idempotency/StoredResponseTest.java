package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
        assertThatThrownBy(() -> response.headers().put("x", List.of())).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void headerNamesAreCaseInsensitiveAndMerged() {
        StoredResponse response = new StoredResponse(200,
                Map.of("Link", List.of("<a>"), "LINK", List.of("<b>")), new byte[0]);
        assertThat(response.headers().get("link")).containsExactlyInAnyOrder("<a>", "<b>");
    }

    @Test
    void equalityIsByValue() {
        assertThat(StoredResponse.of(200, new byte[] {1})).isEqualTo(StoredResponse.of(200, new byte[] {1}))
                .hasSameHashCodeAs(StoredResponse.of(200, new byte[] {1}))
                .isNotEqualTo(StoredResponse.of(200, new byte[] {2}));
    }
}
