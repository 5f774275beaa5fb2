package dev.exactly.payments.json;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reading JSON strictly (duplicate members are an error, nesting is bounded) and writing it in a fixed
 * member order (maps keep their insertion order), so that the bytes of a document are determined by its
 * content.
 */
public final class Json {
    /** The deepest nesting a request body may have: the idempotency fingerprint's limit. */
    public static final int MAX_DEPTH = dev.exactly.idempotency.Fingerprinter.DEFAULT_MAX_JSON_DEPTH;

    private static final JsonMapper MAPPER = JsonMapper.builder(tools.jackson.core.json.JsonFactory.builder()
                    .streamReadConstraints(tools.jackson.core.StreamReadConstraints.builder()
                            .maxNestingDepth(MAX_DEPTH)
                            .build())
                    .build())
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private Json() {}

    /** The bytes of a JSON value (maps keep their insertion order). */
    public static byte[] write(Object value) {
        return MAPPER.writeValueAsBytes(value);
    }

    /**
     * Parses a JSON document sent as UTF-8 (RFC 8259 section 8.1). The bytes are decoded strictly first
     * ({@link #utf8}), and the text parsed: the byte parser read overlong forms as the characters they
     * spell ({@code C0 AF} and {@code E0 80 AF} as {@code /}), accepted sequences past U+10FFFF, and took
     * UTF-16 and UTF-32 bodies by their zero bytes, so that what the service kept was not what the bytes say
     * in UTF-8, and not what an intermediary that reads them as UTF-8 saw.
     *
     * @throws NotUtf8 when the bytes are not UTF-8
     */
    public static JsonNode read(byte[] body) {
        String text = utf8(body);
        // a byte order mark may be ignored (RFC 8259 section 8.1)
        return MAPPER.readTree(text.startsWith("\uFEFF") ? text.substring(1) : text);
    }

    /** A body that is not UTF-8: where it stops being UTF-8, and whether it looks like UTF-16 or UTF-32. */
    public static final class NotUtf8 extends RuntimeException {
        private final int offset;
        private final boolean wideEncoding;

        NotUtf8(int offset, boolean wideEncoding) {
            super(wideEncoding ? "UTF-16 or UTF-32" : "not UTF-8 at byte " + offset, null, false, false);
            this.offset = offset;
            this.wideEncoding = wideEncoding;
        }

        /** The offset of the first byte that begins no well-formed UTF-8 sequence (0 for a wide encoding). */
        public int offset() {
            return offset;
        }

        /** Whether the body starts as UTF-16 or UTF-32 do: a zero byte among its first two, or their mark. */
        public boolean wideEncoding() {
            return wideEncoding;
        }
    }

    /**
     * The body decoded as UTF-8, strictly (RFC 3629: no overlong form, no encoded surrogate, nothing past
     * U+10FFFF, no truncated sequence).
     *
     * @throws NotUtf8 otherwise
     */
    static String utf8(byte[] body) {
        if (body.length >= 2
                && (body[0] == 0
                        || body[1] == 0
                        || (body[0] == (byte) 0xFE && body[1] == (byte) 0xFF)
                        || (body[0] == (byte) 0xFF && body[1] == (byte) 0xFE))) {
            throw new NotUtf8(0, true);
        }
        CharsetDecoder decoder = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(body);
        CharBuffer out = CharBuffer.allocate(body.length); // UTF-8 never takes fewer bytes than UTF-16 units
        CoderResult result = decoder.decode(in, out, true);
        if (!result.isError()) {
            result = decoder.flush(out);
        }
        if (result.isError()) {
            throw new NotUtf8(in.position(), false);
        }
        return out.flip().toString();
    }

    /**
     * Whether {@code json} is one well-formed JSON object and nothing else, read as a stream of tokens (no
     * tree is built).
     */
    public static boolean isObject(byte[] json) {
        try (JsonParser parser = MAPPER.createParser(json)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return false;
            }
            parser.skipChildren();
            return parser.nextToken() == null;
        } catch (JacksonException e) {
            return false;
        }
    }

    /** Parses a JSON document that was written by this service (a stored request or response). */
    public static Map<String, Object> readMap(String json) {
        @SuppressWarnings("unchecked")
        Map<String, Object> map = MAPPER.readValue(json, LinkedHashMap.class);
        return map;
    }
}
