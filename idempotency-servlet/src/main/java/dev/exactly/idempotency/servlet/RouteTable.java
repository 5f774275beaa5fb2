package dev.exactly.idempotency.servlet;

import java.util.List;
import org.jspecify.annotations.Nullable;

/** Matches a request's method and context-relative path against the routes, first declared first. */
final class RouteTable {
    private final List<IdempotentRoute> routes;
    private final List<String[]> compiled;

    RouteTable(List<IdempotentRoute> routes) {
        this.routes = List.copyOf(routes);
        this.compiled = this.routes.stream()
                .map(r -> IdempotentRoute.segments(r.pathTemplate()))
                .toList();
    }

    List<IdempotentRoute> routes() {
        return routes;
    }

    @Nullable
    IdempotentRoute match(String method, String path) {
        if (routes.isEmpty() || !path.startsWith("/")) {
            return null;
        }
        for (int i = 0; i < routes.size(); i++) {
            IdempotentRoute route = routes.get(i);
            if (route.method().equals(method) && matches(compiled.get(i), path)) {
                return route;
            }
        }
        return null;
    }

    /**
     * Whether {@code path} (starting with {@code /}) matches the template's segments: the segments of
     * {@link IdempotentRoute#segments} (one trailing {@code /} ignored, empty segments kept), each without
     * its path parameters ({@code charges;jsessionid=x} names the same resource as {@code charges}), equal
     * to a literal or non-empty for a variable. The path is scanned in place, not split.
     */
    static boolean matches(String[] template, String path) {
        int end = path.length();
        if (end > 1 && path.charAt(end - 1) == '/') {
            end--;
        }
        if (end == 1) {
            return template.length == 0;
        }
        int start = 1;
        for (String literal : template) {
            if (start > end) {
                return false; // the path has fewer segments
            }
            int slash = path.indexOf('/', start);
            if (slash < 0 || slash > end) {
                slash = end;
            }
            int semicolon = path.indexOf(';', start);
            int segmentEnd = semicolon >= 0 && semicolon < slash ? semicolon : slash;
            if (IdempotentRoute.isVariable(literal)) {
                if (segmentEnd == start) {
                    return false;
                }
            } else if (literal.length() != segmentEnd - start || !path.startsWith(literal, start)) {
                return false;
            }
            start = slash + 1;
        }
        return start == end + 1; // and no segment is left over
    }
}
