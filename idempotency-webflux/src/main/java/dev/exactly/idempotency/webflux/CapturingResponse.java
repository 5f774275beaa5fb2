package dev.exactly.idempotency.webflux;

import dev.exactly.idempotency.servlet.Problem;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseCookie;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.ErrorResponse;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;

/**
 * The response a handler writes to on a guarded route: status, headers, cookies and body are kept here
 * until the handler completes, so that the filter records the response before answering. A body that
 * outgrows {@code captureLimit} is sent to the client as it is written, after the status and headers so far
 * ({@code spill}); the record then keeps a {@code response-not-stored} problem instead of it.
 *
 * <p>This response commits when the handler completes, or when its body spills: the {@link #beforeCommit}
 * actions registered on it (by the handler, or by a filter after the guard: security headers, a session's
 * cookie) run then, against this response, before its head is taken, so that what they add is both sent and
 * recorded, and a replay carries it too.
 */
final class CapturingResponse extends ServerHttpResponseDecorator {
    /** Commits the captured head to the real response before a body too large to keep is written to it. */
    @FunctionalInterface
    interface Spill {
        void commit(Captured head);
    }

    /**
     * What the handler produced.
     *
     * @param body      the body, or {@code null} when it outgrew the capture limit and was sent through
     * @param bodyBytes the body's length
     */
    record Captured(
            int status,
            Map<String, List<String>> headers,
            MultiValueMap<String, ResponseCookie> cookies,
            byte @Nullable [] body,
            long bodyBytes) {

        @Nullable
        String contentType() {
            for (Map.Entry<String, List<String>> header : headers.entrySet()) {
                if (header.getKey().equalsIgnoreCase(HttpHeaders.CONTENT_TYPE)
                        && !header.getValue().isEmpty()) {
                    return header.getValue().getFirst();
                }
            }
            return null;
        }
    }

    private final int captureLimit;
    private final Spill spill;
    private final HttpHeaders headers = new HttpHeaders();
    private final MultiValueMap<String, ResponseCookie> cookies = new LinkedMultiValueMap<>();
    private final List<Supplier<? extends Mono<Void>>> beforeCommit = new ArrayList<>();
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private @Nullable HttpStatusCode status;
    private long bodyBytes;
    private boolean streamed;
    private boolean committing;

    CapturingResponse(ServerHttpResponse delegate, int captureLimit, Spill spill) {
        super(delegate);
        this.captureLimit = captureLimit;
        this.spill = spill;
    }

    @Override
    public boolean setStatusCode(@Nullable HttpStatusCode status) {
        if (streamed) {
            return false;
        }
        this.status = status;
        return true;
    }

    /** Kept here too: the decorator would pass it to the real response, past the capture. */
    @Override
    public boolean setRawStatusCode(@Nullable Integer value) {
        return setStatusCode(value == null ? null : HttpStatusCode.valueOf(value));
    }

    /**
     * The handler ended with {@code error} (a {@code ResponseStatusException}, say) before anything was sent:
     * its status and headers, and its problem detail as the body ({@value Problem#MEDIA_TYPE}), replace the
     * content written so far.
     */
    void answer(ErrorResponse error) {
        ProblemDetail detail = error.getBody();
        int code = error.getStatusCode().value();
        HttpStatus known = HttpStatus.resolve(code);
        String title =
                detail.getTitle() != null ? detail.getTitle() : known != null ? known.getReasonPhrase() : "Error";
        URI type = detail.getType() != null ? detail.getType() : URI.create("about:blank");
        byte[] json = new Problem(type, title, code, detail.getDetail(), null, Map.of()).toJson();
        status = error.getStatusCode();
        headers.remove(HttpHeaders.CONTENT_LENGTH);
        error.getHeaders().forEach(headers::put);
        headers.set(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE);
        buffer.reset();
        buffer.writeBytes(json);
        bodyBytes = json.length;
    }

    /**
     * The status set, else 200, the status this response records then: as a server's response falls back on its
     * default (Reactor Netty's is 200), and as a servlet container's and the servlet filter's capture report it.
     */
    @Override
    public HttpStatusCode getStatusCode() {
        return status != null ? status : HttpStatus.OK;
    }

    @Override
    public HttpHeaders getHeaders() {
        return headers;
    }

    @Override
    public MultiValueMap<String, ResponseCookie> getCookies() {
        return cookies;
    }

    @Override
    public void addCookie(ResponseCookie cookie) {
        cookies.add(cookie.getName(), cookie);
    }

    /** Runs when this response commits ({@link #commit}); once it has, on the real response, as WebFlux would. */
    @Override
    public void beforeCommit(Supplier<? extends Mono<Void>> action) {
        if (committing) {
            getDelegate().beforeCommit(action);
        } else {
            beforeCommit.add(action);
        }
    }

    /**
     * Commits this response, once: runs the {@link #beforeCommit} actions registered so far, one after the
     * other in the order they were registered, as WebFlux commits a response. The head is read after this.
     */
    Mono<Void> commit() {
        return Mono.defer(() -> {
            if (committing) {
                return Mono.empty();
            }
            committing = true;
            return Flux.fromIterable(List.copyOf(beforeCommit))
                    .concatMap(Supplier::get)
                    .then();
        });
    }

    @Override
    public boolean isCommitted() {
        return streamed;
    }

    /**
     * Keeps the body as it is written, one buffer at a time (each copied and released at once), until it passes
     * the capture limit; from the buffer that passes it, the head and the body so far are sent, and the rest of
     * the same body goes to the client as the handler writes it, with the client's back-pressure. Nothing is
     * gathered before the limit is checked, so a large or endless body never sits whole in memory.
     */
    @Override
    @SuppressWarnings("ReferenceEquality") // identity: the very buffer that crossed the limit
    public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
        if (streamed) {
            return toClient(counted(Flux.from(body)));
        }
        long[] seen = {bodyBytes};
        DataBuffer[] crossing = {null};
        return Flux.from(body)
                // the buffer that passes the limit opens a second window: the rest of the body, sent on
                .windowUntil(
                        b -> {
                            seen[0] += b.readableByteCount();
                            if (crossing[0] == null && seen[0] > captureLimit) {
                                crossing[0] = b;
                                return true;
                            }
                            return false;
                        },
                        true,
                        1)
                .concatMap(window -> window.switchOnFirst((first, all) -> first.hasValue() && first.get() == crossing[0]
                        ? spillOver(all)
                        : all.doOnNext(this::keep).then()))
                .then();
    }

    private void keep(DataBuffer b) {
        int size = b.readableByteCount();
        byte[] bytes = new byte[size];
        b.read(bytes);
        DataBufferUtils.release(b);
        buffer.writeBytes(bytes);
        bodyBytes += size;
    }

    private Flux<? extends DataBuffer> counted(Flux<? extends DataBuffer> body) {
        return body.doOnNext(b -> bodyBytes += b.readableByteCount());
    }

    /**
     * The body is larger than what is kept: this response commits, and the head and everything so far, then
     * {@code rest}, go to the client.
     */
    private Mono<Void> spillOver(Flux<? extends DataBuffer> rest) {
        return commit().then(Mono.defer(() -> {
            streamed = true;
            spill.commit(snapshot(null));
            byte[] sofar = buffer.toByteArray();
            buffer.reset();
            return toClient(Flux.concat(
                    sofar.length > 0 ? Flux.just(getDelegate().bufferFactory().wrap(sofar)) : Flux.empty(),
                    counted(rest)));
        }));
    }

    /**
     * Writes {@code body} to the client; completes when the body has ended, not when the client has gone. A client
     * that goes away does not stop the handler, as on the servlet side, where the writes of a departed client are
     * counted and dropped: the server cancels its subscription then, and the rest of the body is still taken from
     * the handler, counted and released, so that its outcome, the full length of its body, is recorded. Without
     * that, the rest was dropped uncounted and the response recorded with the length sent so far.
     */
    private Mono<Void> toClient(Flux<? extends DataBuffer> body) {
        Outliving relay = new Outliving(body);
        return getDelegate().writeWith(relay).then(Mono.defer(relay::ended));
    }

    /** The body, handed on to the client's writer while it takes it, then taken to its end and released. */
    private static final class Outliving implements Publisher<DataBuffer> {
        private final Flux<? extends DataBuffer> body;
        private final Sinks.Empty<Void> ended = Sinks.empty();
        private final AtomicBoolean subscribed = new AtomicBoolean();
        private volatile boolean clientGone;

        Outliving(Flux<? extends DataBuffer> body) {
            this.body = body;
        }

        @Override
        public void subscribe(Subscriber<? super DataBuffer> client) {
            if (!subscribed.compareAndSet(false, true)) {
                Operators.error(client, new IllegalStateException("the body is written once"));
                return;
            }
            body.subscribe(new BaseSubscriber<DataBuffer>() {
                @Override
                protected void hookOnSubscribe(Subscription handler) {
                    client.onSubscribe(new Subscription() {
                        @Override
                        public void request(long n) {
                            if (!clientGone) {
                                handler.request(n);
                            }
                        }

                        @Override
                        public void cancel() {
                            clientGone = true;
                            handler.request(Long.MAX_VALUE);
                        }
                    });
                }

                @Override
                protected void hookOnNext(DataBuffer buffer) {
                    if (clientGone) {
                        DataBufferUtils.release(buffer);
                    } else {
                        client.onNext(buffer);
                    }
                }

                @Override
                protected void hookOnComplete() {
                    if (!clientGone) {
                        client.onComplete();
                    }
                    ended.tryEmitEmpty();
                }

                @Override
                protected void hookOnError(Throwable failure) {
                    if (!clientGone) {
                        client.onError(failure);
                    }
                    ended.tryEmitError(failure);
                }
            });
        }

        /** When the body has ended; a body the server's write never subscribed to (it ended at once) is taken here. */
        Mono<Void> ended() {
            if (subscribed.compareAndSet(false, true)) {
                return body.doOnNext(DataBufferUtils::release).then();
            }
            return ended.asMono();
        }
    }

    @Override
    public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
        return writeWith(Flux.from(body).concatMap(Function.identity()));
    }

    @Override
    public Mono<Void> setComplete() {
        return Mono.empty();
    }

    /** What the handler produced, once it {@linkplain #commit committed}; {@code null} body when it was streamed through. */
    Captured finish() {
        return snapshot(streamed ? null : buffer.toByteArray());
    }

    private Captured snapshot(byte @Nullable [] body) {
        Map<String, List<String>> copy = new LinkedHashMap<>();
        headers.forEach((name, values) -> {
            if (!name.equalsIgnoreCase(HttpHeaders.CONTENT_LENGTH)
                    && !name.equalsIgnoreCase(HttpHeaders.TRANSFER_ENCODING)) {
                copy.put(name, List.copyOf(values));
            }
        });
        return new Captured(getStatusCode().value(), copy, new LinkedMultiValueMap<>(cookies), body, bodyBytes);
    }
}
