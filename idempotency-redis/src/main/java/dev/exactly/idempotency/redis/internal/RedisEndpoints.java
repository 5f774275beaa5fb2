package dev.exactly.idempotency.redis.internal;

import io.lettuce.core.RedisURI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Where a store connects, parsed from one connection string.
 *
 * <ul>
 *   <li>{@code redis-cluster://[user:password@]host:port,host:port[?options]} (or {@code rediss-cluster://}
 *       for TLS): Redis Cluster with these seed nodes; credentials and options apply to every seed.</li>
 *   <li>{@code redis://host:port,host:port} (or {@code rediss://}): the same, Cluster seeds.</li>
 *   <li>{@code redis://a:6379,redis://b:6379}: a comma list of complete URIs, Cluster seeds.</li>
 *   <li>any other single Lettuce URI ({@code redis://}, {@code rediss://}, {@code redis-socket://},
 *       {@code redis-sentinel://h1,h2?sentinelMasterId=m}): standalone (or Sentinel-managed) Redis.</li>
 * </ul>
 *
 * @param cluster whether to use the Cluster client
 * @param uris    one URI for standalone, the seeds for Cluster
 */
public record RedisEndpoints(boolean cluster, List<RedisURI> uris) {

    public RedisEndpoints {
        uris = List.copyOf(uris);
        if (uris.isEmpty()) {
            throw new IllegalArgumentException("no Redis endpoint");
        }
    }

    /**
     * Parses a connection string (see the type's documentation).
     *
     * @throws IllegalArgumentException when it is not one of the forms above
     */
    public static RedisEndpoints parse(String connection) {
        String text = connection.strip();
        int schemeEnd = text.indexOf("://");
        if (schemeEnd <= 0) {
            throw new IllegalArgumentException("not a Redis URI (expected scheme://...): " + redacted(text));
        }
        String scheme = text.substring(0, schemeEnd).toLowerCase(Locale.ROOT);
        String rest = text.substring(schemeEnd + 3);
        return switch (scheme) {
            case "redis-cluster" -> new RedisEndpoints(true, seeds("redis", rest));
            case "rediss-cluster" -> new RedisEndpoints(true, seeds("rediss", rest));
            case "redis", "rediss" -> {
                if (rest.indexOf(',') < 0) {
                    yield new RedisEndpoints(false, List.of(RedisURI.create(text)));
                }
                yield new RedisEndpoints(true, rest.contains("://") ? uriList(text) : seeds(scheme, rest));
            }
            default -> new RedisEndpoints(false, List.of(RedisURI.create(text)));
        };
    }

    /** {@code [userinfo@]h1:p1,h2:p2[/path][?query]} → one URI per host, sharing userinfo and suffix. */
    private static List<RedisURI> seeds(String scheme, String rest) {
        int authorityEnd = indexOfAny(rest, '/', '?');
        String authority = rest.substring(0, authorityEnd);
        String suffix = rest.substring(authorityEnd);
        int at = authority.lastIndexOf('@');
        String userInfo = at >= 0 ? authority.substring(0, at + 1) : "";
        String hosts = authority.substring(at + 1);
        List<RedisURI> uris = new ArrayList<>();
        for (String host : hosts.split(",", -1)) {
            String trimmed = host.strip();
            if (trimmed.isEmpty()) {
                throw new IllegalArgumentException("empty host in Redis Cluster seed list");
            }
            uris.add(RedisURI.create(scheme + "://" + userInfo + trimmed + suffix));
        }
        return uris;
    }

    private static List<RedisURI> uriList(String text) {
        List<RedisURI> uris = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            String trimmed = part.strip();
            if (trimmed.isEmpty()) {
                throw new IllegalArgumentException("empty element in Redis URI list");
            }
            if (!trimmed.contains("://")) {
                throw new IllegalArgumentException(
                        "mixed Redis URI list: every element needs a scheme, or use redis-cluster://h1:p1,h2:p2");
            }
            uris.add(RedisURI.create(trimmed));
        }
        return uris;
    }

    private static int indexOfAny(String text, char a, char b) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == a || c == b) {
                return i;
            }
        }
        return text.length();
    }

    /** The string without credentials, for error messages. */
    private static String redacted(String text) {
        int at = text.lastIndexOf('@');
        return at < 0 ? text : "***" + text.substring(at);
    }
}
