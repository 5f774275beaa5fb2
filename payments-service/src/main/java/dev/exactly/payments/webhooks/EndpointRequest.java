package dev.exactly.payments.webhooks;

import dev.exactly.payments.json.JsonFields;
import dev.exactly.payments.json.Parsed;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/webhook-endpoints}, validated:
 * {@code {"url":"https://…","enabled_events":["charge.succeeded",…],"description":"…"}}.
 * {@code url} is required: an absolute {@code http} or {@code https} URL with a host, without user
 * information or fragment, of at most {@value #MAX_URL} characters. A host written as a number must be an IPv4
 * address in dotted-decimal form ({@code 2130706433} and {@code 0177.0.0.1} are read as different addresses by
 * different resolvers, and a C resolver reads {@code 0x7f000001} as one too). Unless private networks are
 * allowed, a host that names a non-public address by itself, an IP address ({@link Destinations#notPublic}) or
 * {@code localhost} and its subdomains, is refused here ({@code url_not_public}), since no delivery to it would
 * ever be sent; a name that resolves to such an address is refused at each delivery attempt, where the name is
 * resolved. {@code enabled_events} lists known event types, or is {@code ["*"]} (the default) for every type.
 *
 * @param url           the URL as sent
 * @param enabledEvents the types, without duplicates, or {@code ["*"]}
 * @param description   at most 200 characters, or {@code null}
 */
public record EndpointRequest(
        String url, List<String> enabledEvents, @Nullable String description) {
    /** The longest URL accepted. */
    public static final int MAX_URL = 2048;

    private static final List<String> FIELDS = List.of("url", "enabled_events", "description");
    private static final Pattern NOT_EMPTY = Pattern.compile("(?s).+");
    private static final Pattern DESCRIPTION = Pattern.compile("(?s).{0,200}");
    /** Numbers in the forms a C resolver reads as an IPv4 address (inet_aton): decimal, octal, hexadecimal. */
    private static final String NUMBER = "(0[xX][0-9a-fA-F]*|[0-9]+)";

    private static final Pattern NUMERIC = Pattern.compile(NUMBER + "(\\." + NUMBER + ")*\\.?");
    private static final String OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
    private static final Pattern DOTTED_DECIMAL = Pattern.compile(OCTET + "(\\." + OCTET + "){3}");

    public EndpointRequest {
        enabledEvents = List.copyOf(enabledEvents);
    }

    /**
     * Reads and validates a request body; every broken rule is reported.
     *
     * @param allowPrivateNetworks whether deliveries may go to non-public addresses (then a URL naming one is kept)
     */
    public static Parsed<EndpointRequest> parse(byte[] body, boolean allowPrivateNetworks) {
        JsonFields fields = JsonFields.of(body);
        fields.onlyKnown(FIELDS);
        // an empty URL is refused here: accepted, every delivery of the endpoint would fail
        String raw = fields.requiredString("url", NOT_EMPTY, "an absolute http or https URL");
        String url = raw.isEmpty() ? "" : url(raw, allowPrivateNetworks, fields);
        List<String> events =
                events(fields.optionalStringList("enabled_events", EventType.values().length + 1), fields);
        String description = fields.optionalString("description", DESCRIPTION, "a string of at most 200 characters");
        return fields.result(() -> new EndpointRequest(url, events, description));
    }

    private static String url(String raw, boolean allowPrivateNetworks, JsonFields fields) {
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
        String host = uri.getHost();
        if (NUMERIC.matcher(host).matches() && !DOTTED_DECIMAL.matcher(host).matches()) {
            fields.error(
                    "url",
                    "url_invalid",
                    "url's host is a number but not an IPv4 address in dotted-decimal form "
                            + "(four numbers from 0 to 255 without leading zeros): resolvers read such a host differently");
            return "";
        }
        if (!allowPrivateNetworks) {
            Optional<String> notPublic;
            try {
                notPublic = notPublic(host);
            } catch (UnknownHostException e) {
                fields.error("url", "url_invalid", "url's host is not a valid IPv6 address");
                return "";
            }
            if (notPublic.isPresent()) {
                fields.error(
                        "url",
                        "url_not_public",
                        "url's host is " + notPublic.get() + ": webhooks are delivered to public addresses only");
                return "";
            }
        }
        return raw;
    }

    /**
     * What non-public address {@code host} names by itself, without resolving it: an IP address (IPv6 in
     * brackets, its zone left out), or {@code localhost}, which resolvers answer with a loopback address
     * (RFC 6761); empty for any other name, which only its resolution tells.
     */
    private static Optional<String> notPublic(String host) throws UnknownHostException {
        String name = host.toLowerCase(Locale.ROOT);
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1);
        }
        if (name.equals("localhost") || name.endsWith(".localhost")) {
            return Optional.of(host + ", a loopback name");
        }
        String literal;
        if (name.startsWith("[") && name.endsWith("]")) {
            int zone = name.indexOf('%');
            literal = zone < 0 ? name : name.substring(0, zone) + "]";
            if (literal.indexOf(':') < 0) {
                throw new UnknownHostException("not an IPv6 literal");
            }
        } else if (DOTTED_DECIMAL.matcher(name).matches()) {
            literal = name;
        } else {
            return Optional.empty();
        }
        // the JDK parses an IPv6 address in brackets (or throws) and a dotted-decimal IPv4 address: it looks
        // neither up
        return Destinations.describeNotPublic(InetAddress.getByName(literal));
    }

    private static List<String> events(@Nullable List<String> requested, JsonFields fields) {
        if (requested == null) {
            return List.of(EventType.ALL);
        }
        if (requested.isEmpty()) {
            fields.error(
                    "enabled_events",
                    "parameter_invalid",
                    "enabled_events must list at least one event type, or be [\"*\"] for every type");
            return List.of();
        }
        Set<String> types = new LinkedHashSet<>();
        for (String name : requested) {
            if (!name.equals(EventType.ALL) && EventType.of(name).isEmpty()) {
                fields.error(
                        "enabled_events",
                        "event_type_unknown",
                        "unknown event type '"
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
