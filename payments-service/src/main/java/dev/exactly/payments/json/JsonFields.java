package dev.exactly.payments.json;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * Validates one request body member by member: reads each member with its rule and collects a
 * {@link FieldError} for every member that breaks it, so that the caller hears of all of them at once. A
 * body that is not a JSON object is one error.
 */
public final class JsonFields {
    private final List<FieldError> errors = new ArrayList<>();
    private final @Nullable JsonNode root;

    private JsonFields(@Nullable JsonNode root) {
        this.root = root;
    }

    /** Reads {@code body} as a JSON object; any failure is recorded as an error. */
    public static JsonFields of(byte[] body) {
        if (body.length == 0) {
            JsonFields fields = new JsonFields(null);
            fields.error("", "body_missing", "the request body must be a JSON object");
            return fields;
        }
        JsonNode node;
        try {
            node = Json.read(body);
        } catch (Json.NotUtf8 e) {
            JsonFields fields = new JsonFields(null);
            fields.error(
                    "",
                    "invalid_json",
                    e.wideEncoding()
                            ? "the request body must be UTF-8: it looks like UTF-16 or UTF-32"
                            : "the request body is not valid UTF-8 (byte " + (e.offset() + 1) + ")");
            return fields;
        } catch (JacksonException e) {
            JsonFields fields = new JsonFields(null);
            String duplicated = duplicatedMember(e);
            if (duplicated != null) {
                fields.error(
                        truncate(duplicated),
                        "parameter_duplicated",
                        truncate(duplicated) + " is given more than once: send each member once");
            } else if (e instanceof tools.jackson.core.exc.StreamConstraintsException) {
                fields.error("", "invalid_json", "the request body nests deeper than " + Json.MAX_DEPTH + " levels");
            } else {
                fields.error("", "invalid_json", "the request body is not valid JSON" + where(e));
            }
            return fields;
        }
        if (node == null || !node.isObject()) {
            JsonFields fields = new JsonFields(null);
            fields.error("", "invalid_json", "the request body must be a JSON object");
            return fields;
        }
        return new JsonFields(node);
    }

    /**
     * The member a body names twice ({@code metadata.key} for a nested one, {@code items.2.name} in an
     * array), or null for any other failure. Such a body is refused rather than read as its first or its
     * last value: readers differ on which one counts, so the intermediary that checked it and the service
     * could each see another request.
     */
    private static @Nullable String duplicatedMember(JacksonException e) {
        String message = e.getOriginalMessage();
        if (message == null
                || !message.startsWith("Duplicate Object property")
                || !(e.processor() instanceof tools.jackson.core.JsonParser parser)) {
            return null;
        }
        StringBuilder member = new StringBuilder();
        for (String step : parser.streamReadContext().pathAsPointer().toString().split("/", -1)) {
            if (!step.isEmpty()) {
                member.append(member.isEmpty() ? "" : ".")
                        .append(step.replace("~1", "/").replace("~0", "~"));
            }
        }
        return member.isEmpty() ? null : member.toString();
    }

    /** Where the body stopped being JSON: its line and column, nothing of its content. */
    private static String where(JacksonException e) {
        tools.jackson.core.TokenStreamLocation location = e.getLocation();
        if (location == null || location.getLineNr() < 1 || location.getColumnNr() < 1) {
            return "";
        }
        return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }

    /** The errors so far. */
    public List<FieldError> errors() {
        return List.copyOf(errors);
    }

    /** The value {@code build} makes of the members read, or the errors if there are any. */
    public <T> Parsed<T> result(Supplier<T> build) {
        return valid() ? new Parsed.Valid<>(build.get()) : new Parsed.Invalid<>(errors());
    }

    public boolean valid() {
        return errors.isEmpty();
    }

    /** Records an error of one member. */
    public void error(String field, String code, String message) {
        errors.add(new FieldError(field, code, message));
    }

    /** Refuses members outside {@code known}. */
    public void onlyKnown(List<String> known) {
        if (root == null) {
            return;
        }
        for (String name : root.propertyNames()) {
            if (!known.contains(name)) {
                error(truncate(name), "parameter_unknown", "unknown parameter '" + truncate(name) + "'");
            }
        }
    }

    /** Whether {@code name} is present as JSON {@code null}, recorded as an error: it must be {@code rule} or absent. */
    private boolean refusedNull(String name, String rule) {
        JsonNode node = root == null ? null : root.get(name);
        if (node == null || !node.isNull()) {
            return false;
        }
        error(name, "parameter_invalid", name + " must be " + rule + ", or left out; not null");
        return true;
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

    /**
     * An optional integer in {@code [min, max]}; {@code null} when absent or wrong. An explicit JSON
     * {@code null} is an error: where leaving a number out picks the larger action (capture the whole
     * authorization), a client's value that came out null must not pick it.
     */
    public @Nullable Long optionalLong(String name, long min, long max) {
        if (refusedNull(name, "an integer (minor units)")) {
            return null;
        }
        if (member(name) == null) {
            return null;
        }
        int before = errors.size();
        long value = requiredLong(name, min, max);
        return errors.size() == before ? value : null;
    }

    /**
     * An optional boolean; {@code fallback} when absent or wrong. An explicit JSON {@code null} is an error,
     * not the fallback: a flag that came out null is no decision.
     */
    public boolean optionalBoolean(String name, boolean fallback) {
        if (refusedNull(name, "true or false")) {
            return fallback;
        }
        JsonNode node = member(name);
        if (node == null) {
            return fallback;
        }
        if (!node.isBoolean()) {
            error(name, "parameter_invalid", name + " must be true or false");
            return fallback;
        }
        return node.booleanValue();
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
        String unstorable = unstorable(value);
        if (unstorable != null) {
            error(name, "parameter_invalid", name + " must not hold " + unstorable);
            return null;
        }
        if (!pattern.matcher(value).matches()) {
            error(name, "parameter_invalid", name + " must be " + rule);
            return null;
        }
        return value;
    }

    /**
     * What in {@code text} cannot be kept as it was sent, or {@code null}: a control character other than tab,
     * line feed and carriage return (U+0000 above all, which PostgreSQL's text refuses: the request failed in
     * the database and was answered "outcome unknown", retried forever), or a lone UTF-16 surrogate (no
     * character: stored as "?", and two different ones read as the same request).
     */
    static @Nullable String unstorable(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
                return String.format("control characters (U+%04X)", (int) c);
            }
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return String.format("lone surrogates (U+%04X)", (int) c);
            }
        }
        return null;
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
            } else if (unstorable(key) != null) {
                error(name, "parameter_invalid", name + " keys must not hold " + unstorable(key));
            } else if (!value.isString() || value.stringValue().length() > maxValue) {
                error(
                        name + "." + truncate(key),
                        "parameter_invalid",
                        name + " values must be strings of at most " + maxValue + " characters");
            } else if (unstorable(value.stringValue()) != null) {
                error(
                        name + "." + truncate(key),
                        "parameter_invalid",
                        name + " values must not hold " + unstorable(value.stringValue()));
            } else {
                map.put(key, value.stringValue());
            }
        }
        return map;
    }

    /**
     * An optional array of at most {@code maxItems} strings; {@code null} when absent or null, an empty
     * list when it is wrong (the error recorded).
     */
    public @Nullable List<String> optionalStringList(String name, int maxItems) {
        JsonNode node = member(name);
        if (node == null) {
            return null;
        }
        if (!node.isArray()) {
            error(name, "parameter_invalid", name + " must be an array of strings");
            return List.of();
        }
        if (node.size() > maxItems) {
            error(name, "parameter_invalid", name + " may hold at most " + maxItems + " items");
            return List.of();
        }
        List<String> items = new ArrayList<>();
        for (JsonNode item : node) {
            if (!item.isString()) {
                error(name, "parameter_invalid", name + " must be an array of strings");
                return List.of();
            }
            items.add(item.stringValue());
        }
        return items;
    }

    /**
     * A name the client sent, as an error echoes it: its first 40 characters and "...", never half of a
     * surrogate pair (an answer must not hold a lone surrogate).
     */
    static String truncate(String s) {
        if (s.length() <= 40) {
            return s;
        }
        int end = Character.isHighSurrogate(s.charAt(39)) ? 39 : 40;
        return s.substring(0, end) + "...";
    }
}
