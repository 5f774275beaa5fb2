package dev.exactly.idempotency.spring.boot;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;

/** The handler methods of Spring WebFlux's handler mappings. Loaded only when WebFlux is on the class path. */
final class WebFluxMappings {
    private WebFluxMappings() {}

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
                                    info.getPatternsCondition().getPatterns().stream()
                                            .map(PathPattern::getPatternString)
                                            .collect(Collectors.toSet()),
                                    false)));
        }
        return mappings;
    }
}
