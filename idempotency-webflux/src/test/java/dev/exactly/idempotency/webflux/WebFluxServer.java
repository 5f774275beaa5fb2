package dev.exactly.idempotency.webflux;

import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.Lease;
import dev.exactly.idempotency.servlet.HttpContract;
import dev.exactly.idempotency.servlet.HttpProtocol;
import java.net.URI;
import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebHandler;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The HTTP contract's server on the WebFlux filter: Reactor Netty on a free loopback port, WebFlux's
 * handler chain, the contract's handler as the application (run off the event loop, as a blocking handler
 * must be).
 */
final class WebFluxServer implements HttpContract.Server {
    private final DisposableServer server;

    private WebFluxServer(DisposableServer server) {
        this.server = server;
    }

    static HttpContract.Server start(
            IdempotencyEngine engine, HttpContract.Settings settings, HttpContract.Handler handler) {
        return start(
                IdempotencyWebFilter.builder(engine)
                        .routes(settings.routes())
                        .tenantResolver(ReactiveTenantResolver.apiKeys(settings.apiKeys())
                                .orElse(ReactiveTenantResolver.principal()))
                        .maxRequestBodyBytes(settings.maxRequestBodyBytes())
                        .maxStoredResponseBytes(settings.maxStoredResponseBytes())
                        .replayHeaders(settings.replayHeaders().toArray(String[]::new))
                        .credentialHeaders(settings.credentialHeaders().toArray(String[]::new))
                        .storeUnavailableRetryAfter(settings.storeUnavailableRetryAfter())
                        .whenStoreUnavailable(settings.whenStoreUnavailable())
                        .build(),
                settings.arrivals(),
                handler);
    }

    static HttpContract.Server start(IdempotencyWebFilter filter, Runnable arrivals, HttpContract.Handler handler) {
        WebFilter arrival = (exchange, chain) -> {
            arrivals.run();
            return chain.filter(exchange);
        };
        WebFilter fakeAuthentication = (exchange, chain) -> {
            String user = exchange.getRequest().getHeaders().getFirst("X-Test-User");
            if (user == null) {
                return chain.filter(exchange);
            }
            Principal principal = () -> user;
            return chain.filter(
                    exchange.mutate().principal(Mono.just(principal)).build());
        };
        HttpHandler http = WebHttpHandlerBuilder.webHandler(application(handler))
                .filters(filters -> filters.addAll(List.of(arrival, fakeAuthentication, filter)))
                .build();
        DisposableServer server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle(new ReactorHttpHandlerAdapter(http))
                .bindNow();
        return new WebFluxServer(server);
    }

    private static WebHandler application(HttpContract.Handler handler) {
        return exchange -> DataBufferUtils.join(exchange.getRequest().getBody())
                .map(joined -> {
                    byte[] bytes = new byte[joined.readableByteCount()];
                    joined.read(bytes);
                    DataBufferUtils.release(joined);
                    return bytes;
                })
                .defaultIfEmpty(new byte[0])
                .publishOn(Schedulers.boundedElastic())
                .map(body -> {
                    Map<String, List<String>> headers = new LinkedHashMap<>();
                    exchange.getRequest()
                            .getHeaders()
                            .forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), List.copyOf(values)));
                    try {
                        return handler.handle(new HttpContract.Received(
                                exchange.getRequest().getMethod().name(),
                                exchange.getRequest().getPath().value(),
                                headers,
                                body,
                                // the attribute names both filters use
                                (Lease) exchange.getAttribute(HttpProtocol.LEASE_ATTRIBUTE),
                                exchange.getAttribute(HttpProtocol.UNGUARDED_ATTRIBUTE) != null));
                    } catch (RuntimeException e) {
                        throw e;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                })
                .flatMap(reply -> {
                    if (reply.doNotRecord()) {
                        exchange.getAttributes().put(HttpProtocol.DO_NOT_RECORD_ATTRIBUTE, true);
                    }
                    exchange.getResponse().setStatusCode(HttpStatusCode.valueOf(reply.status()));
                    reply.headers()
                            .forEach(h -> exchange.getResponse().getHeaders().add(h.getKey(), h.getValue()));
                    return reply.body().length == 0
                            ? exchange.getResponse().setComplete()
                            : exchange.getResponse()
                                    .writeWith(Mono.just(exchange.getResponse()
                                            .bufferFactory()
                                            .wrap(reply.body())));
                });
    }

    @Override
    public URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
    }

    @Override
    public void close() {
        server.disposeNow();
    }
}
