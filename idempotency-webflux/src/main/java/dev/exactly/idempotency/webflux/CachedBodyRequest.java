package dev.exactly.idempotency.webflux;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import reactor.core.publisher.Flux;

/** The request the handler sees: its body was read once (bounded) and fingerprinted, and is replayed from memory. */
final class CachedBodyRequest extends ServerHttpRequestDecorator {
    private final byte[] body;

    CachedBodyRequest(ServerHttpRequest delegate, byte[] body) {
        super(delegate);
        this.body = body;
    }

    @Override
    public Flux<DataBuffer> getBody() {
        return body.length == 0
                ? Flux.empty()
                : Flux.defer(() -> Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body.clone())));
    }
}
