package dev.exactly.payments.json;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reading request bodies strictly (duplicate members are an error, unknown members are refused by the
 * validators) and writing response bodies in a fixed member order, so that the bytes of an answer are
 * determined by its content.
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

    /** Parses a JSON document that was written by this service (a stored request or response). */
    public static Map<String, Object> readMap(String json) {
        @SuppressWarnings("unchecked")
        Map<String, Object> map = MAPPER.readValue(json, LinkedHashMap.class);
        return map;
    }

    /**
     * Collects the field errors of one request body and reads its members with their rules. A body
     * that is not a JSON object is one error.
     */
    public static final class Fields {
        private final List<Map<String, Object>> errors = new ArrayList<>();
        private final @Nullable JsonNode root;

        private Fields(@Nullable JsonNode root) {
            this.root = root;
        }

        /** Reads {@code body} as a JSON object; any failure is recorded as an error. */
        public static Fields of(byte[] body) {
            if (body.length == 0) {
                Fields fields = new Fields(null);
                fields.error("", "body_missing", "the request body must be a JSON object");
                return fields;
            }
            JsonNode node;
            try {
                node = read(body);
            } catch (JacksonException e) {
                Fields fields = new Fields(null);
                fields.error("", "invalid_json", "the request body is not valid JSON");
                return fields;
            }
            if (node == null || !node.isObject()) {
                Fields fields = new Fields(null);
                fields.error("", "invalid_json", "the request body must be a JSON object");
                return fields;
            }
            return new Fields(node);
        }

        /** The errors so far. */
        public List<Map<String, Object>> errors() {
            return List.copyOf(errors);
        }

        public boolean valid() {
            return errors.isEmpty();
        }

        /** Records an error of one member. */
        public void error(String field, String code, String message) {
            Map<String, Object> error = new LinkedHashMap<>();
            error.put("field", field);
            error.put("code", code);
            error.put("message", message);
            errors.add(error);
        }

        /** Refuses members outside {@code known}. */
        public void onlyKnown(List<String> known) {
            if (root == null) {
                return;
            }
            for (String name : root.propertyNames()) {
                if (!known.contains(name)) {
                    error(name, "parameter_unknown", "unknown parameter '" + truncate(name) + "'");
                }
            }
        }

        private @Nullable JsonNode member(String name) {
            if (root == null) {
                return null;
            }
            JsonNode node = root.get(name);
            return node == null || node.isNull() ? null : node;
        }

        /** A required integer in {@code [min, max]}; 0 when missing or wrong. */
        public long requiredLong(String name, long min, long max) {
            JsonNode node = member(name);
            if (node == null) {
                if (root != null) {
                    error(name, "parameter_missing", name + " is required");
                }
                return 0;
            }
            if (!node.isIntegralNumber() || !node.canConvertToLong()) {
                error(name, "parameter_invalid", name + " must be an integer (minor units)");
                return 0;
            }
            long value = node.longValue();
            if (value < min || value > max) {
                error(name, "parameter_invalid", name + " must be between " + min + " and " + max);
                return 0;
            }
            return value;
        }

        /** A required string matching {@code pattern}; empty when missing or wrong. */
        public String requiredString(String name, Pattern pattern, String rule) {
            JsonNode node = member(name);
            if (node == null) {
                if (root != null) {
                    error(name, "parameter_missing", name + " is required");
                }
                return "";
            }
            String value = checkString(name, node, pattern, rule);
            return value == null ? "" : value;
        }

        /** An optional string matching {@code pattern}; {@code null} when absent or null. */
        public @Nullable String optionalString(String name, Pattern pattern, String rule) {
            JsonNode node = member(name);
            if (node == null) {
                return null;
            }
            return checkString(name, node, pattern, rule);
        }

        private @Nullable String checkString(String name, JsonNode node, Pattern pattern, String rule) {
            if (!node.isString()) {
                error(name, "parameter_invalid", name + " must be a string");
                return null;
            }
            String value = node.stringValue();
            if (!pattern.matcher(value).matches()) {
                error(name, "parameter_invalid", name + " must be " + rule);
                return null;
            }
            return value;
        }

        /**
         * An optional object of string values with at most {@code maxKeys} members, keys of 1 to
         * {@code maxKey} characters and values of at most {@code maxValue}.
         */
        public Map<String, String> optionalStringMap(String name, int maxKeys, int maxKey, int maxValue) {
            JsonNode node = member(name);
            Map<String, String> map = new java.util.TreeMap<>();
            if (node == null) {
                return map;
            }
            if (!node.isObject()) {
                error(name, "parameter_invalid", name + " must be an object of strings");
                return map;
            }
            if (node.size() > maxKeys) {
                error(name, "parameter_invalid", name + " may hold at most " + maxKeys + " keys");
                return map;
            }
            for (Map.Entry<String, JsonNode> e : node.properties()) {
                String key = e.getKey();
                JsonNode value = e.getValue();
                if (key.isEmpty() || key.length() > maxKey) {
                    error(name, "parameter_invalid", name + " keys must have 1 to " + maxKey + " characters");
                } else if (!value.isString() || value.stringValue().length() > maxValue) {
                    error(name + "." + truncate(key), "parameter_invalid",
                            name + " values must be strings of at most " + maxValue + " characters");
                } else {
                    map.put(key, value.stringValue());
                }
            }
            return map;
        }

        private static String truncate(String s) {
            return s.length() > 40 ? s.substring(0, 40) + "..." : s;
        }
    }
}
