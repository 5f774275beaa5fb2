package dev.exactly.idempotency.client.spring;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpRequestDecorator;
import org.springframework.web.reactive.function.BodyInserter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A request body that goes out byte for byte the same on every attempt: the first time it is written,
 * the original inserter's bytes are recorded; every later attempt writes the recording instead of
 * serialising again.
 */
final class ReplayableBody implements BodyInserter<Object, ClientHttpRequest> {
    private final BodyInserter<?, ? super ClientHttpRequest> original;
    private volatile byte @Nullable [] recorded;

    ReplayableBody(BodyInserter<?, ? super ClientHttpRequest> original) {
        this.original = original;
    }

    @Override
    public Mono<Void> insert(ClientHttpRequest request, Context context) {
        byte[] bytes = recorded;
        if (bytes != null) {
            return bytes.length == 0
                    ? request.setComplete()
                    : request.writeWith(Mono.just(request.bufferFactory().wrap(bytes)));
        }
        return original.insert(new Recorder(request), context);
    }

    private final class Recorder extends ClientHttpRequestDecorator {
        Recorder(ClientHttpRequest delegate) {
            super(delegate);
        }

        @Override
        public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
            return DataBufferUtils.join(Flux.from(body))
                    .map(joined -> {
                        byte[] bytes = new byte[joined.readableByteCount()];
                        joined.read(bytes);
                        DataBufferUtils.release(joined);
                        return bytes;
                    })
                    .defaultIfEmpty(new byte[0])
                    .flatMap(bytes -> {
                        recorded = bytes;
                        return bytes.length == 0
                                ? getDelegate().setComplete()
                                : getDelegate()
                                        .writeWith(Mono.just(bufferFactory().wrap(bytes)));
                    });
        }

        @Override
        public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
            return writeWith(Flux.from(body).flatMap(Flux::from));
        }

        @Override
        public Mono<Void> setComplete() {
            recorded = new byte[0];
            return getDelegate().setComplete();
        }
    }
}
