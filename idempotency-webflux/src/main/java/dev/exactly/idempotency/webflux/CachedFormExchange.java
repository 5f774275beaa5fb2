package dev.exactly.idempotency.webflux;

import java.util.Map;
import org.springframework.core.ResolvableType;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.codec.FormHttpMessageReader;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;
import reactor.core.publisher.Mono;

/**
 * The exchange a guarded handler sees: {@link #getFormData()} parses the body the filter read and replays
 * ({@link CachedBodyRequest}). A mutated exchange otherwise keeps the original's form data, read from the
 * network body the filter has already consumed, and a handler of an {@code application/x-www-form-urlencoded}
 * request found its form empty.
 */
final class CachedFormExchange extends ServerWebExchangeDecorator {
    private static final ResolvableType FORM_TYPE =
            ResolvableType.forClassWithGenerics(MultiValueMap.class, String.class, String.class);
    private static final FormHttpMessageReader FORMS = new FormHttpMessageReader();

    static {
        FORMS.setMaxInMemorySize(-1); // the body is already in memory, bounded by the fingerprint's limit
    }

    private final Mono<MultiValueMap<String, String>> form;

    CachedFormExchange(ServerWebExchange delegate, ServerHttpRequest request) {
        super(delegate);
        this.form = isForm(request)
                ? FORMS.readMono(FORM_TYPE, request, Map.of())
                        .switchIfEmpty(Mono.fromSupplier(LinkedMultiValueMap::new))
                        .cache()
                : Mono.fromSupplier(LinkedMultiValueMap::new);
    }

    private static boolean isForm(ServerHttpRequest request) {
        try {
            MediaType type = request.getHeaders().getContentType();
            return type != null && MediaType.APPLICATION_FORM_URLENCODED.isCompatibleWith(type);
        } catch (InvalidMediaTypeException e) {
            return false;
        }
    }

    @Override
    public Mono<MultiValueMap<String, String>> getFormData() {
        return form;
    }
}
