package dev.exactly.payments.config;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * A database location as {@code DATABASE_URL} gives it: {@code postgres://user:pass@host:port/db?params}
 * (the form hosting platforms hand out; {@code postgresql://} too) or a {@code jdbc:postgresql:} URL.
 *
 * @param jdbcUrl  the JDBC URL without credentials (for the {@code postgres://} form)
 * @param user     the user, or {@code null} when the URL carries it
 * @param password the password, or {@code null}
 */
public record DatabaseUrl(
        String jdbcUrl, @Nullable String user, @Nullable String password) {

    /** Parses either form. */
    public static DatabaseUrl parse(String url) {
        String value = url.strip();
        if (value.startsWith("jdbc:postgresql:")) {
            return new DatabaseUrl(value, null, null);
        }
        if (!value.startsWith("postgres://") && !value.startsWith("postgresql://")) {
            throw new IllegalArgumentException(
                    "DATABASE_URL must be postgres://user:pass@host:port/db or a jdbc:postgresql: URL");
        }
        URI uri = URI.create(value);
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("DATABASE_URL has no host");
        }
        String user = null;
        String password = null;
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
            password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
        }
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/postgres" : uri.getRawPath();
        String jdbc = "jdbc:postgresql://" + uri.getHost() + (uri.getPort() > 0 ? ":" + uri.getPort() : "") + path
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        return new DatabaseUrl(jdbc, user, password);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "DatabaseUrl[" + jdbcUrl + (user == null ? "" : ", user=" + user) + "]";
    }
}
