package dev.exactly.payments.api;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.RequestPath;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.condition.PathPatternsRequestCondition;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.servlet.support.WebContentGenerator;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * The methods a path takes, as its {@code Allow} says (RFC 9110, section 10.2.1): the methods of every handler
 * mapped to the path, {@code HEAD} with {@code GET} (Spring answers it from the {@code GET} handler) and
 * {@code OPTIONS} (Spring answers it for every mapped path). The same set whoever refuses a method: Spring
 * for a method the path has no handler for, Tomcat for {@code TRACE}, which it refuses before any
 * application code and would otherwise answer with every method its dispatcher servlet implements.
 */
@Component
public final class AllowedMethods {
    private static final List<RequestMethod> ORDER = List.of(
            RequestMethod.GET,
            RequestMethod.HEAD,
            RequestMethod.POST,
            RequestMethod.PUT,
            RequestMethod.PATCH,
            RequestMethod.DELETE,
            RequestMethod.OPTIONS);

    private final Supplier<? extends Collection<HandlerMapping>> source;
    private volatile @Nullable List<HandlerMapping> mappings;

    /** @param mappings the dispatcher's handler mappings, in its order; asked for at the first use */
    @Autowired
    public AllowedMethods(ObjectProvider<HandlerMapping> mappings) {
        this(() -> mappings.orderedStream().toList());
    }

    AllowedMethods(Supplier<? extends Collection<HandlerMapping>> mappings) {
        this.source = mappings;
    }

    private List<HandlerMapping> mappings() {
        List<HandlerMapping> known = mappings;
        if (known == null) {
            known = List.copyOf(source.get());
            mappings = known;
        }
        return known;
    }

    /**
     * The methods the path {@code requestUri} takes ({@code request} gives the context path; an error dispatch
     * passes the original request's URI); empty when no handler is mapped to it.
     */
    public Set<RequestMethod> of(HttpServletRequest request, String requestUri) {
        RequestPath path = RequestPath.parse(requestUri, request.getContextPath());
        // as the dispatcher looks a handler up: a path that a request mapping matches is that mapping's alone
        // (another method there is Spring's 405); only a path none matches goes on to the handlers by URL
        EnumSet<RequestMethod> methods = EnumSet.noneOf(RequestMethod.class);
        boolean mapped = false;
        for (HandlerMapping mapping : mappings()) {
            if (mapping instanceof RequestMappingInfoHandlerMapping infos) {
                for (RequestMappingInfo info : infos.getHandlerMethods().keySet()) {
                    PathPatternsRequestCondition patterns = info.getPathPatternsCondition();
                    if (patterns != null
                            && patterns.getPatterns().stream().anyMatch(p -> p.matches(path.pathWithinApplication()))) {
                        mapped = true;
                        Set<RequestMethod> declared = info.getMethodsCondition().getMethods();
                        methods.addAll(
                                declared.isEmpty()
                                        ? EnumSet.of(
                                                RequestMethod.GET,
                                                RequestMethod.POST,
                                                RequestMethod.PUT,
                                                RequestMethod.PATCH,
                                                RequestMethod.DELETE)
                                        : declared);
                    }
                }
            }
        }
        if (!mapped) {
            HttpServletRequest get = new PathOnly(request, requestUri);
            ServletRequestPathUtils.parseAndCache(get);
            for (HandlerMapping mapping : mappings()) {
                if (!(mapping instanceof RequestMappingInfoHandlerMapping) && addServed(mapping, get, methods)) {
                    mapped = true;
                    break;
                }
            }
        }
        if (!mapped) {
            return Set.of();
        }
        if (methods.contains(RequestMethod.GET)) {
            methods.add(RequestMethod.HEAD);
        }
        methods.add(RequestMethod.OPTIONS);
        methods.remove(RequestMethod.TRACE);
        return methods;
    }

    /**
     * A {@code GET} of another URI, for asking the handlers by URL whether they serve it; its attributes its
     * own, so that nothing cached on it reaches the request it wraps.
     */
    private static final class PathOnly extends HttpServletRequestWrapper {
        private final String uri;
        private final Map<String, Object> attributes = new HashMap<>();

        PathOnly(HttpServletRequest request, String uri) {
            super(request);
            this.uri = uri;
        }

        @Override
        public String getMethod() {
            return "GET";
        }

        @Override
        public String getRequestURI() {
            return uri;
        }

        @Override
        public String getServletPath() {
            return uri.substring(getContextPath().length());
        }

        @Override
        public @Nullable String getPathInfo() {
            return null;
        }

        @Override
        public DispatcherType getDispatcherType() {
            return DispatcherType.REQUEST;
        }

        @Override
        public @Nullable Object getAttribute(String name) {
            return attributes.get(name);
        }

        @Override
        public Enumeration<String> getAttributeNames() {
            return Collections.enumeration(attributes.keySet());
        }

        @Override
        public void setAttribute(String name, Object value) {
            attributes.put(name, value);
        }

        @Override
        public void removeAttribute(String name) {
            attributes.remove(name);
        }
    }

    /** {@link #of} as an {@code Allow} value, in a fixed order ({@code GET, HEAD, POST, …, OPTIONS}). */
    public String allow(HttpServletRequest request, String requestUri) {
        Set<RequestMethod> methods = of(request, requestUri);
        return ORDER.stream().filter(methods::contains).map(RequestMethod::name).collect(Collectors.joining(", "));
    }

    /** {@code Allow} for the methods Spring named, with {@code HEAD} beside {@code GET} and {@code OPTIONS}. */
    public static String allow(Set<HttpMethod> supported) {
        EnumSet<RequestMethod> methods = EnumSet.noneOf(RequestMethod.class);
        supported.forEach(m -> {
            RequestMethod resolved = RequestMethod.resolve(m);
            if (resolved != null) {
                methods.add(resolved);
            }
        });
        if (methods.contains(RequestMethod.GET)) {
            methods.add(RequestMethod.HEAD);
        }
        methods.add(RequestMethod.OPTIONS);
        return ORDER.stream().filter(methods::contains).map(RequestMethod::name).collect(Collectors.joining(", "));
    }

    /** A handler by URL (static files): the methods it serves, when it says; whether one is mapped. */
    private static boolean addServed(HandlerMapping mapping, HttpServletRequest request, Set<RequestMethod> methods) {
        HandlerExecutionChain chain;
        try {
            chain = mapping.getHandler(request);
        } catch (Exception e) {
            return false;
        }
        if (chain == null) {
            return false;
        }
        if (chain.getHandler() instanceof WebContentGenerator generator && generator.getSupportedMethods() != null) {
            for (String name : generator.getSupportedMethods()) {
                try {
                    methods.add(RequestMethod.valueOf(name));
                } catch (IllegalArgumentException unknown) {
                    // a method without a RequestMethod constant: not advertised
                }
            }
        } else {
            methods.add(RequestMethod.GET);
        }
        return true;
    }
}
