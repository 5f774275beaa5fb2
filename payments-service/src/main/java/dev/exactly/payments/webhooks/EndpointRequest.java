package dev.exactly.payments.webhooks;

import dev.exactly.payments.json.JsonFields;
import dev.exactly.payments.json.Parsed;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/webhook-endpoints}, validated:
 * {@code {"url":"https://…","enabled_events":["charge.succeeded",…],"description":"…"}}.
 * {@code url} is required: an absolute {@code http} or {@code https} URL with a host, without user
 * information or fragment, of at most {@value #MAX_URL} characters. {@code enabled_events} lists known
 * event types, or is {@code ["*"]} (the default) for every type.
 *
 * @param url           the URL as sent
 * @param enabledEvents the types, without duplicates, or {@code ["*"]}
 * @param description   at most 200 characters, or {@code null}
 */
public record EndpointRequest(String url, List<String> enabledEvents, @Nullable String description) {
    /** The longest URL accepted. */
    public static final int MAX_URL = 2048;
    private static final List<String> FIELDS = List.of("url", "enabled_events", "description");
    private static final Pattern NOT_EMPTY = Pattern.compile("(?s).+");
    private static final Pattern DESCRIPTION = Pattern.compile("(?s).{0,200}");

    public EndpointRequest {
        enabledEvents = List.copyOf(enabledEvents);
    }

    /** Reads and validates a request body; every broken rule is reported. */
    public static Parsed<EndpointRequest> parse(byte[] body) {
        JsonFields fields = JsonFields.of(body);
        fields.onlyKnown(FIELDS);
        // an empty URL is refused here: accepted, every delivery of the endpoint would fail
        String raw = fields.requiredString("url", NOT_EMPTY, "an absolute http or https URL");
        String url = raw.isEmpty() ? "" : url(raw, fields);
        List<String> events = events(fields.optionalStringList("enabled_events", EventType.values().length + 1), fields);
        String description = fields.optionalString("description", DESCRIPTION, "a string of at most 200 characters");
        return fields.result(() -> new EndpointRequest(url, events, description));
    }

    private static String url(String raw, JsonFields fields) {
        if (raw.length() > MAX_URL) {
            fields.error("url", "url_invalid", "url must have at most " + MAX_URL + " characters");
            return "";
        }
        URI uri;
        try {
            uri = new URI(raw);
        } catch (URISyntaxException e) {
            fields.error("url", "url_invalid", "url is not a valid URL");
            return "";
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            fields.error("url", "url_invalid", "url must be an absolute http or https URL");
            return "";
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            fields.error("url", "url_invalid", "url must name a host");
            return "";
        }
        if (uri.getPort() == 0 || uri.getPort() > 65535) {
            // accepted, every delivery failed (port out of range) until the endpoint was dead-lettered
            fields.error("url", "url_invalid", "url must name a port from 1 to 65535, or none");
            return "";
        }
        if (uri.getRawUserInfo() != null) {
            fields.error("url", "url_invalid", "url must not hold user information (credentials)");
            return "";
        }
        if (uri.getRawFragment() != null) {
            fields.error("url", "url_invalid", "url must not have a fragment");
            return "";
        }
        return raw;
    }

    private static List<String> events(@Nullable List<String> requested, JsonFields fields) {
        if (requested == null) {
            return List.of(EventType.ALL);
        }
        if (requested.isEmpty()) {
            fields.error("enabled_events", "parameter_invalid",
                    "enabled_events must list at least one event type, or be [\"*\"] for every type");
            return List.of();
        }
        Set<String> types = new LinkedHashSet<>();
        for (String name : requested) {
            if (!name.equals(EventType.ALL) && EventType.of(name).isEmpty()) {
                fields.error("enabled_events", "event_type_unknown", "unknown event type '"
                        + (name.length() > 40 ? name.substring(0, 40) + "..." : name) + "' (known: "
                        + String.join(", ", EventType.wireNames()) + ")");
                return List.of();
            }
            types.add(name);
        }
        if (types.contains(EventType.ALL) && types.size() > 1) {
            fields.error("enabled_events", "parameter_invalid", "\"*\" already takes every type: send it alone");
            return List.of();
        }
        return List.copyOf(types);
    }
}
