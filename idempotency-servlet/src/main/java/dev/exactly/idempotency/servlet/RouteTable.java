package dev.exactly.idempotency.servlet;

import java.util.List;
import org.jspecify.annotations.Nullable;

/** Matches a request's method and context-relative path against the routes, first declared first. */
final class RouteTable {
    private final List<IdempotentRoute> routes;
    private final List<String[]> compiled;

    RouteTable(List<IdempotentRoute> routes) {
        this.routes = List.copyOf(routes);
        this.compiled = this.routes.stream().map(r -> IdempotentRoute.segments(r.pathTemplate())).toList();
    }

    List<IdempotentRoute> routes() {
        return routes;
    }

    @Nullable IdempotentRoute match(String method, String path) {
        if (routes.isEmpty() || !path.startsWith("/")) {
            return null;
        }
        String[] segments = IdempotentRoute.segments(path);
        for (int i = 0; i < routes.size(); i++) {
            IdempotentRoute route = routes.get(i);
            if (route.method().equals(method) && matches(compiled.get(i), segments)) {
                return route;
            }
        }
        return null;
    }

    private static boolean matches(String[] template, String[] path) {
        if (template.length != path.length) {
            return false;
        }
        for (int i = 0; i < template.length; i++) {
            String segment = stripPathParameters(path[i]);
            if (IdempotentRoute.isVariable(template[i]) ? segment.isEmpty() : !template[i].equals(segment)) {
                return false;
            }
        }
        return true;
    }

    /** {@code charges;jsessionid=x} names the same resource as {@code charges}. */
    private static String stripPathParameters(String segment) {
        int semicolon = segment.indexOf(';');
        return semicolon < 0 ? segment : segment.substring(0, semicolon);
    }
}
