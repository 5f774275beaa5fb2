package dev.exactly.idempotency.servlet;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Which response headers are stored and replayed: an allow-list, minus a deny-list of credentials and
 * framing headers that wins even over the allow-list.
 */
final class HeaderPolicy {
    /** Replayed by default. */
    static final Set<String> DEFAULT_ALLOWED = Set.of(
            "content-type",
            "content-encoding",
            "content-language",
            "content-disposition",
            "location",
            "etag",
            "cache-control",
            "link");
    /** Never stored or replayed, whatever the configuration says. */
    static final Set<String> ALWAYS_DENIED = Set.of(
            "set-cookie",
            "set-cookie2",
            "cookie",
            "authorization",
            "proxy-authorization",
            "www-authenticate",
            "proxy-authenticate",
            "content-length",
            "transfer-encoding",
            "connection",
            "keep-alive",
            "upgrade",
            "trailer",
            "te",
            IdempotencyFilter.REPLAYED_HEADER.toLowerCase(Locale.ROOT),
            IdempotencyFilter.LEGACY_REPLAYED_HEADER.toLowerCase(Locale.ROOT),
            IdempotencyFilter.EXPIRES_HEADER.toLowerCase(Locale.ROOT));

    private final Set<String> denied;
    /**
     * Each allowed name to itself (its key set is the allow-list): a stored response names its headers with
     * these strings, not with the lower-cased copy each response makes, which a store would keep once per record.
     */
    private final Map<String, String> allowedNames;
    /**
     * The same names under the spellings responses mostly use, each to its lower-cased name: the name as
     * given and in title case ({@code Content-Type}); any other spelling is lower-cased first. Spares a
     * response's allowed headers a lower-cased copy each.
     */
    private final Map<String, String> spellings;

    HeaderPolicy(Collection<String> extraAllowed, Collection<String> credentialHeaders) {
        Set<String> deny = new TreeSet<>(ALWAYS_DENIED);
        credentialHeaders.forEach(h -> deny.add(h.toLowerCase(Locale.ROOT)));
        Set<String> allow = new TreeSet<>(DEFAULT_ALLOWED);
        extraAllowed.forEach(h -> allow.add(h.toLowerCase(Locale.ROOT)));
        allow.removeAll(deny);
        this.denied = Set.copyOf(deny);
        this.allowedNames = allow.stream().collect(Collectors.toUnmodifiableMap(name -> name, name -> name));
        Map<String, String> spelled = new HashMap<>();
        for (String name : allow) {
            spelled.put(name, name);
            spelled.put(titleCase(name), name);
        }
        this.spellings = Map.copyOf(spelled);
    }

    /** {@code content-type} as {@code Content-Type}. */
    static String titleCase(String lowerCase) {
        char[] chars = lowerCase.toCharArray();
        boolean start = true;
        for (int i = 0; i < chars.length; i++) {
            if (start && chars[i] >= 'a' && chars[i] <= 'z') {
                chars[i] = (char) (chars[i] - ('a' - 'A'));
            }
            start = chars[i] == '-';
        }
        return new String(chars);
    }

    boolean stored(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return allowedNames.containsKey(lower) && !denied.contains(lower);
    }

    Set<String> allowed() {
        return allowedNames.keySet();
    }

    /** The allow-listed headers of a captured response, names lower-cased. */
    Map<String, List<String>> filter(List<CapturedResponse.Header> headers) {
        Map<String, List<String>> kept = new LinkedHashMap<>();
        for (CapturedResponse.Header header : headers) {
            String name = spellings.get(header.name());
            if (name == null) {
                name = allowedNames.get(header.name().toLowerCase(Locale.ROOT));
            }
            if (name != null) { // the deny-list was taken out of it
                kept.put(name, header.values());
            }
        }
        return kept;
    }
}
