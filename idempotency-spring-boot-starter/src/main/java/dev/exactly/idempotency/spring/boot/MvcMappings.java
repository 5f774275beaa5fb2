package dev.exactly.idempotency.spring.boot;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;

/** The handler methods of Spring MVC's handler mappings. Loaded only when Spring MVC is on the class path. */
final class MvcMappings {
    static final String HANDLER_MAPPING_CLASS =
            "org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping";
    static final String DISPATCHER_SERVLET_PATH_CLASS =
            "org.springframework.boot.webmvc.autoconfigure.DispatcherServletPath";

    private MvcMappings() {}

    static List<AnnotatedRoutes.Mapping> of(ListableBeanFactory beans) {
        List<AnnotatedRoutes.Mapping> mappings = new ArrayList<>();
        for (RequestMappingInfoHandlerMapping handlerMapping :
                beans.getBeansOfType(RequestMappingInfoHandlerMapping.class).values()) {
            handlerMapping
                    .getHandlerMethods()
                    .forEach((RequestMappingInfo info, HandlerMethod handler) ->
                            mappings.add(new AnnotatedRoutes.Mapping(
                                    handler.getMethod(),
                                    handler.getBeanType(),
                                    info.getMethodsCondition().getMethods().stream()
                                            .map(Enum::name)
                                            .collect(Collectors.toSet()),
                                    Set.copyOf(info.getPatternValues()),
                                    true)));
        }
        return mappings;
    }

    /** What the DispatcherServlet's mapping puts before the handler mappings' paths ({@code spring.mvc.servlet.path}). */
    static String pathPrefix(ListableBeanFactory beans) {
        if (!PropertiesReader.present(DISPATCHER_SERVLET_PATH_CLASS)) {
            return "";
        }
        var path = beans.getBeanProvider(org.springframework.boot.webmvc.autoconfigure.DispatcherServletPath.class)
                .getIfUnique();
        return path == null ? "" : path.getPrefix();
    }
}
