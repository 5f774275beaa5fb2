package dev.exactly.idempotency.webflux;

import java.time.Instant;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.core.ResolvableType;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.codec.FormHttpMessageReader;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;
import org.springframework.web.server.adapter.DefaultServerWebExchange;
import org.springframework.web.server.i18n.AcceptHeaderLocaleContextResolver;
import org.springframework.web.server.session.DefaultWebSessionManager;
import reactor.core.publisher.Mono;

/**
 * The exchange a guarded handler sees: {@link #getFormData()} parses the body the filter read and replays
 * ({@link CachedBodyRequest}). A mutated exchange otherwise keeps the original's form data, read from the
 * network body the filter has already consumed, and a handler of an {@code application/x-www-form-urlencoded}
 * request found its form empty.
 *
 * <p>Conditional requests ({@code checkNotModified}) are evaluated, by WebFlux's own rules, against this
 * exchange's request and response. A mutated exchange evaluates them on the original's, so the 304 of a
 * matching {@code If-None-Match}, or the 412 of an {@code If-Match} that does not match, was set on the
 * response beneath the capture, and the handler's answer was recorded and sent as a 200 without a body.
 */
final class CachedFormExchange extends ServerWebExchangeDecorator {
    private static final ResolvableType FORM_TYPE =
            ResolvableType.forClassWithGenerics(MultiValueMap.class, String.class, String.class);
    private static final FormHttpMessageReader FORMS = new FormHttpMessageReader();

    static {
        FORMS.setMaxInMemorySize(-1); // the body is already in memory, bounded by the fingerprint's limit
    }

    /** Nothing is read through the exchange that only evaluates conditional requests. */
    private static final ServerCodecConfigurer NO_CODECS = ServerCodecConfigurer.create();

    static {
        NO_CODECS.registerDefaults(false);
    }

    private final ServerHttpRequest request;
    private final Mono<MultiValueMap<String, String>> form;
    private @Nullable ServerWebExchange conditional;

    CachedFormExchange(ServerWebExchange delegate, ServerHttpRequest request) {
        super(delegate);
        this.request = request;
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

    @Override
    public boolean checkNotModified(Instant lastModified) {
        return conditional().checkNotModified(lastModified);
    }

    @Override
    public boolean checkNotModified(String etag) {
        return conditional().checkNotModified(etag);
    }

    @Override
    public boolean checkNotModified(@Nullable String etag, Instant lastModified) {
        return conditional().checkNotModified(etag, lastModified);
    }

    @Override
    public boolean isNotModified() {
        ServerWebExchange evaluated = conditional;
        return evaluated != null ? evaluated.isNotModified() : super.isNotModified();
    }

    /** WebFlux's evaluation of conditional requests, on this request and response (the capture, when guarded). */
    private ServerWebExchange conditional() {
        ServerWebExchange evaluated = conditional;
        if (evaluated == null) {
            evaluated = new DefaultServerWebExchange(
                    request,
                    getResponse(),
                    new DefaultWebSessionManager(),
                    NO_CODECS,
                    new AcceptHeaderLocaleContextResolver());
            conditional = evaluated;
        }
        return evaluated;
    }
}
