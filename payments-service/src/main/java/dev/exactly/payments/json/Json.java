package dev.exactly.payments.json;

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

    /** Parses a JSON document. */
    public static JsonNode read(byte[] body) {
        return MAPPER.readTree(body);
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
