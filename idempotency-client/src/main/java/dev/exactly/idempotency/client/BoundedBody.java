package dev.exactly.idempotency.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpHeaders;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;

/**
 * An answer's body in memory, up to a limit: a body that declares more ({@code Content-Length}) is refused
 * before a byte of it is read, and one that grows past the limit is dropped as it does; either way the
 * exchange is cancelled (the connection closed) and the body fails with {@link TooLarge}, which keeps the
 * status and the headers.
 */
final class BoundedBody implements HttpResponse.BodySubscriber<byte[]> {

    /** The body went past the limit; the answer's status and headers. */
    static final class TooLarge extends IOException {
        private final int status;
        private final transient HttpHeaders headers;

        TooLarge(int status, HttpHeaders headers, long limit) {
            super("an answer (status " + status + ") with a body larger than " + limit + " bytes");
            this.status = status;
            this.headers = headers;
        }

        int status() {
            return status;
        }

        HttpHeaders headers() {
            return headers;
        }
    }

    private final int limit;
    private final HttpResponse.ResponseInfo info;
    private final CompletableFuture<byte[]> body = new CompletableFuture<>();
    private final ByteArrayOutputStream read = new ByteArrayOutputStream();
    private Flow.@Nullable Subscription subscription; // set by onSubscribe, before any other call

    private BoundedBody(int limit, HttpResponse.ResponseInfo info) {
        this.limit = limit;
        this.info = info;
    }

    /** Bodies of at most {@code limit} bytes. */
    static HttpResponse.BodyHandler<byte[]> handler(int limit) {
        return info -> new BoundedBody(limit, info);
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        this.subscription = subscription;
        if (info.headers().firstValueAsLong("Content-Length").orElse(-1) > limit) {
            refuse();
            return;
        }
        subscription.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> buffers) {
        if (body.isDone()) {
            return;
        }
        for (ByteBuffer buffer : buffers) {
            if (buffer.remaining() > limit - read.size()) {
                refuse();
                return;
            }
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            read.writeBytes(bytes);
        }
    }

    private void refuse() {
        Objects.requireNonNull(subscription, "subscribed").cancel();
        body.completeExceptionally(new TooLarge(info.statusCode(), info.headers(), limit));
    }

    @Override
    public void onError(Throwable failure) {
        body.completeExceptionally(failure);
    }

    @Override
    public void onComplete() {
        body.complete(read.toByteArray());
    }

    @Override
    public CompletionStage<byte[]> getBody() {
        return body;
    }
}
