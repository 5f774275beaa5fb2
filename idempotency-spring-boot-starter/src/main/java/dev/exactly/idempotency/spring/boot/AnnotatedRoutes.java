package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.spring.Idempotent;
import dev.exactly.idempotency.spring.boot.IdempotencyProperties.InFlightMode;
import dev.exactly.idempotency.spring.boot.IdempotencyProperties.Route;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.PropertyResolver;

/**
 * Routes declared with {@link Idempotent} on controller methods, as the handler mappings of Spring MVC or
 * WebFlux list them, turned into {@link IdempotentRoute}s with the same defaults and checks as the
 * {@code exactly.idempotency.routes} properties, and merged with the configured routes. Every problem is
 * collected and reported at startup in one {@link InvalidIdempotencyPropertiesException}.
 */
final class AnnotatedRoutes {
    /** Methods a class-level annotation does not guard. */
    private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

    private static final Pattern VARIABLE = Pattern.compile("\\{([A-Za-z_][A-Za-z0-9_.-]*)(?::.*)?}");

    private AnnotatedRoutes() {}

    /**
     * One handler method of a handler mapping.
     *
     * @param method   the controller method
     * @param beanType the controller class
     * @param methods  the HTTP methods it is mapped to
     * @param patterns its path patterns
     * @param servlet  whether it is Spring MVC's (a handler there must answer before it returns)
     */
    record Mapping(Method method, Class<?> beanType, Set<String> methods, Set<String> patterns, boolean servlet) {
        /** The method's own annotation, or {@code null}. */
        @Nullable
        Idempotent own() {
            return AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
        }

        /** The class's annotation, or {@code null}. */
        @Nullable
        Idempotent inherited() {
            return AnnotatedElementUtils.findMergedAnnotation(beanType, Idempotent.class);
        }

        String where() {
            StringBuilder params = new StringBuilder();
            for (Class<?> type : method.getParameterTypes()) {
                params.append(params.isEmpty() ? "" : ", ").append(type.getSimpleName());
            }
            return "@Idempotent on " + beanType.getSimpleName() + "." + method.getName() + "(" + params + ")";
        }
    }

    /** A route and where it was declared, for the report of a clash. */
    record Declared(String source, IdempotentRoute route) {}

    /**
     * The configured routes followed by the annotated ones (the more specific template first, so that
     * {@code /v1/charges/search} is matched before {@code /v1/charges/{id}}).
     *
     * @param configured the routes of the properties and of {@code IdempotentRoute} beans, in order
     * @param mappings   every handler method of the application's handler mappings
     * @param pathPrefix what the server puts before the mappings' paths (a servlet mapping such as
     *                   {@code /api}), empty for none
     * @throws InvalidIdempotencyPropertiesException listing every annotation at fault and every clash
     */
    static List<IdempotentRoute> merge(
            List<Declared> configured,
            List<Mapping> mappings,
            IdempotencyProperties properties,
            String pathPrefix,
            PropertyResolver placeholders) {
        List<String> problems = new ArrayList<>();
        List<Declared> annotated = new ArrayList<>();
        for (Mapping mapping : mappings) {
            Idempotent own = mapping.own();
            Idempotent inherited = own == null ? mapping.inherited() : null;
            if (own != null) {
                annotated.addAll(routes(mapping, own, properties, pathPrefix, placeholders, problems));
            } else if (inherited != null && mapping.methods().isEmpty()) {
                annotated.addAll(routes(mapping, inherited, properties, pathPrefix, placeholders, problems));
            } else if (inherited != null) {
                // on the class: the methods that change something; reads stay unguarded
                Set<String> unsafe = new TreeSet<>(mapping.methods());
                unsafe.removeAll(SAFE_METHODS);
                if (!unsafe.isEmpty()) {
                    Mapping writes = new Mapping(
                            mapping.method(), mapping.beanType(), unsafe, mapping.patterns(), mapping.servlet());
                    annotated.addAll(routes(writes, inherited, properties, pathPrefix, placeholders, problems));
                }
            }
        }
        annotated.sort(Comparator.comparing((Declared d) -> d.route().pathTemplate(), AnnotatedRoutes::specificity)
                .thenComparing(d -> d.route().pathTemplate())
                .thenComparing(d -> d.route().method()));
        List<Declared> all = new ArrayList<>(configured);
        all.addAll(annotated);
        Map<String, Declared> seen = new HashMap<>();
        for (Declared declared : all) {
            String shape =
                    declared.route().method() + " " + shape(declared.route().pathTemplate());
            Declared first = seen.putIfAbsent(shape, declared);
            if (first != null) {
                problems.add(first.source() + " and " + declared.source() + " guard the same route ("
                        + declared.route().method() + " " + declared.route().pathTemplate() + "): keep one of them");
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidIdempotencyPropertiesException(problems);
        }
        return all.stream().map(Declared::route).toList();
    }

    private static List<Declared> routes(
            Mapping mapping,
            Idempotent annotation,
            IdempotencyProperties properties,
            String pathPrefix,
            PropertyResolver placeholders,
            List<String> problems) {
        String where = mapping.where();
        if (mapping.methods().isEmpty()) {
            problems.add(where + ": its mapping names no HTTP method, so it would guard every method (GET included); "
                    + "map it with @PostMapping, @PutMapping, ... or @RequestMapping(method = ...)");
            return List.of();
        }
        String asynchronous = mapping.servlet() ? asynchronousResult(mapping.method()) : null;
        if (asynchronous != null) {
            problems.add(where + ": it returns " + asynchronous + ", an asynchronous result; on Spring MVC a guarded "
                    + "route's response is captured when its handler returns, so the work would run and its answer be "
                    + "lost (the key released, a retry running it again): return the result itself");
            return List.of();
        }
        Route settings;
        try {
            settings = settings(annotation, placeholders);
        } catch (IllegalArgumentException e) {
            problems.add(where + ": " + e.getMessage());
            return List.of();
        }
        List<Declared> routes = new ArrayList<>();
        for (String pattern : new TreeSet<>(mapping.patterns().isEmpty() ? Set.of("") : mapping.patterns())) {
            String template;
            try {
                template = pathPrefix + template(pattern);
            } catch (IllegalArgumentException e) {
                problems.add(where + ": " + e.getMessage());
                continue;
            }
            for (String method : new TreeSet<>(mapping.methods())) {
                settings.setMethod(method);
                settings.setPath(template);
                try {
                    routes.add(new Declared(where, PropertiesReader.route(settings, properties, where + ": ")));
                } catch (IllegalArgumentException e) {
                    problems.add(e.getMessage());
                }
            }
        }
        return routes;
    }

    /** Return types with which Spring MVC answers after the handler method returned (an async dispatch). */
    private static final Set<String> ASYNCHRONOUS = Set.of(
            "java.util.concurrent.Callable",
            "java.util.concurrent.CompletionStage",
            "java.util.concurrent.Future",
            "org.springframework.web.context.request.async.DeferredResult",
            "org.springframework.web.context.request.async.WebAsyncTask",
            "org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter",
            "org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody",
            "org.reactivestreams.Publisher");

    /** The simple name of {@code method}'s asynchronous return type (also inside a {@code ResponseEntity}), or null. */
    static @Nullable String asynchronousResult(Method method) {
        java.lang.reflect.Type type = method.getGenericReturnType();
        Class<?> raw = method.getReturnType();
        if (isA(raw, Set.of("org.springframework.http.HttpEntity"))
                && type instanceof java.lang.reflect.ParameterizedType entity
                && entity.getActualTypeArguments().length == 1) {
            java.lang.reflect.Type body = entity.getActualTypeArguments()[0];
            raw = body instanceof Class<?> c
                    ? c
                    : body instanceof java.lang.reflect.ParameterizedType p && p.getRawType() instanceof Class<?> c
                            ? c
                            : Object.class;
        }
        return isA(raw, ASYNCHRONOUS) ? raw.getSimpleName() : null;
    }

    private static boolean isA(Class<?> type, Set<String> names) {
        if (names.contains(type.getName())) {
            return true;
        }
        for (Class<?> parent : type.getInterfaces()) {
            if (isA(parent, names)) {
                return true;
            }
        }
        return type.getSuperclass() != null && isA(type.getSuperclass(), names);
    }

    /** The annotation as a route of the properties: what it leaves empty comes from the top level. */
    private static Route settings(Idempotent annotation, PropertyResolver placeholders) {
        Route route = new Route();
        route.setKeyRequired(annotation.keyRequired());
        route.setRecordServerErrors(annotation.recordServerErrors());
        route.setLease(duration(annotation.lease(), "lease", placeholders));
        route.setRetention(duration(annotation.retention(), "retention", placeholders));
        route.getInFlight().setRetryAfter(duration(annotation.retryAfter(), "retryAfter", placeholders));
        route.getInFlight().setMaxWait(duration(annotation.maxWait(), "maxWait", placeholders));
        route.getInFlight()
                .setPolicy(
                        switch (annotation.inFlight()) {
                            case DEFAULT -> null;
                            case REJECT -> InFlightMode.REJECT;
                            case WAIT -> InFlightMode.WAIT;
                        });
        return route;
    }

    private static @Nullable Duration duration(String text, String attribute, PropertyResolver placeholders) {
        if (text.isBlank()) {
            return null;
        }
        String resolved;
        try {
            resolved = placeholders.resolveRequiredPlaceholders(text).strip();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(attribute + " = \"" + text + "\": " + e.getMessage(), e);
        }
        try {
            return DurationStyle.detectAndParse(resolved);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    attribute + " = \"" + text + "\" is not a duration (write it as 500ms, " + "10s, 5m, 24h or 7d)",
                    e);
        }
    }

    /**
     * A route template from a Spring path pattern: literal segments stay, {@code {id}} and {@code {id:regex}}
     * become {@code {id}}; wildcards ({@code *}, {@code **}, {@code ?}, <code>{*rest}</code>) and partial
     * variables ({@code file.{ext}}) cannot be guarded.
     */
    static String template(String pattern) {
        if (pattern.isEmpty() || pattern.equals("/")) {
            return "/";
        }
        List<String> segments = segments(pattern.startsWith("/") ? pattern.substring(1) : pattern);
        StringBuilder template = new StringBuilder();
        for (String segment : segments) {
            template.append('/');
            Matcher variable = VARIABLE.matcher(segment);
            if (variable.matches()) {
                template.append('{').append(variable.group(1)).append('}');
            } else if (segment.chars().anyMatch(c -> c == '*' || c == '?' || c == '{' || c == '}')) {
                throw new IllegalArgumentException("the path pattern " + pattern + " has a wildcard or a partial "
                        + "variable ('" + segment + "'); a guarded route is made of literal and {variable} segments");
            } else {
                template.append(segment);
            }
        }
        return template.toString();
    }

    /** Splits on '/' outside braces (a variable's regex may hold one). */
    private static List<String> segments(String path) {
        List<String> segments = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}') {
                depth--;
            } else if (c == '/' && depth == 0) {
                segments.add(path.substring(start, i));
                start = i + 1;
            }
        }
        if (start < path.length()) {
            segments.add(path.substring(start));
        }
        return segments;
    }

    /** Literal segments sort before variables, position by position. */
    private static int specificity(String a, String b) {
        String[] x = a.split("/", -1);
        String[] y = b.split("/", -1);
        for (int i = 0; i < Math.min(x.length, y.length); i++) {
            boolean vx = x[i].startsWith("{");
            boolean vy = y[i].startsWith("{");
            if (vx != vy) {
                return vx ? 1 : -1;
            }
        }
        return 0;
    }

    /** The template with its variables unnamed: two routes of the same shape match the same paths. */
    private static String shape(String template) {
        return template.replaceAll("\\{[^/}]*}", "{}");
    }

    /** The routes of the properties, then those of {@link IdempotentRoute} beans, each with where it was declared. */
    static List<Declared> configured(IdempotencyProperties properties, ObjectProvider<IdempotentRoute> routeBeans) {
        List<Declared> configured = new ArrayList<>();
        List<IdempotentRoute> fromProperties = PropertiesReader.routes(properties);
        for (int i = 0; i < fromProperties.size(); i++) {
            configured.add(new Declared(PropertiesReader.P + "routes[" + i + "]", fromProperties.get(i)));
        }
        routeBeans.orderedStream().forEach(route -> configured.add(new Declared("an IdempotentRoute bean", route)));
        return configured;
    }
}
