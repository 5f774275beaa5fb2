package dev.exactly.idempotency.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeaderCodecTest {

    @Test
    void roundTripsNamesValuesAndOrder() {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("z-last-alphabetically", List.of("1"));
        headers.put("content-type", List.of("application/json; charset=utf-8"));
        headers.put("x-multi", List.of("a", "", "b, c"));
        headers.put("x-none", List.of());
        headers.put("x-unicode", List.of("caf\u00e9 \ud83d\udcb3"));

        Map<String, List<String>> decoded = HeaderCodec.decode(HeaderCodec.encode(headers));

        assertThat(decoded).containsExactlyEntriesOf(headers);
        assertThat(HeaderCodec.decode(HeaderCodec.encode(Map.of()))).isEmpty();
    }

    @Test
    void writingInPlaceGivesTheSameBytesAsEncode() {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("content-type", List.of("application/json"));
        headers.put("x-multi", List.of("a", "", "b, c"));
        headers.put("x-none", List.of());
        headers.put("x-unicode-\u00e9", List.of("caf\u00e9 \ud83d\udcb3", "lone \ud83d surrogate"));
        for (Map<String, List<String>> h : List.of(headers, Map.<String, List<String>>of())) {
            byte[] expected = HeaderCodec.encode(h);
            assertThat(HeaderCodec.encodedLength(h)).isEqualTo(expected.length);
            byte[] out = new byte[expected.length + 3];
            assertThat(HeaderCodec.encodeInto(h, out, 2)).isEqualTo(2 + expected.length);
            assertThat(Arrays.copyOfRange(out, 2, 2 + expected.length)).isEqualTo(expected);
        }
    }

    @Test
    void rejectsCorruptBlocks() {
        byte[] valid = HeaderCodec.encode(Map.of("a", List.of("b")));
        assertThatThrownBy(() -> HeaderCodec.decode(new byte[0])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> HeaderCodec.decode(Arrays.copyOf(valid, valid.length - 1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> HeaderCodec.decode(Arrays.copyOf(valid, valid.length + 1)))
                .isInstanceOf(IllegalArgumentException.class);
        byte[] otherVersion = valid.clone();
        otherVersion[0] = 2;
        assertThatThrownBy(() -> HeaderCodec.decode(otherVersion)).isInstanceOf(IllegalArgumentException.class);
        byte[] hugeCount = valid.clone();
        hugeCount[1] = 0x7f;
        assertThatThrownBy(() -> HeaderCodec.decode(hugeCount)).isInstanceOf(IllegalArgumentException.class);
    }
}
