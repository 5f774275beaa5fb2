package dev.exactly.psp.internal;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.jspecify.annotations.Nullable;

/**
 * A blocking HTTP/1.1 client for plain {@code http} URIs, behind the JDK's {@link HttpClient} API: the
 * calling thread writes the request (head and body in one write), reads the answer from the socket itself
 * and keeps the connection for the next call. The JDK's client writes a request's head and body apart and
 * hands every answer through its selector thread; on a virtual thread a blocking read costs one park
 * instead. Failures are the JDK client's: {@link HttpConnectTimeoutException} when the connection does
 * not open in time, {@link java.net.ConnectException} when it is refused, {@link HttpTimeoutException} when
 * the answer does not come within the request's timeout, another {@link IOException} when the connection
 * is lost. A pooled connection the server closed is noticed before it is used (one non-blocking read) and
 * one idle longer than {@link #MAX_IDLE} is not used again. A request is sent again, once and on a new
 * connection, only when a pooled connection ended before any byte of its answer and the request may be
 * delivered twice (GET, HEAD, OPTIONS: no effects); no other failure is retried
 * here. Answer bodies larger than {@link #MAX_BODY_BYTES} fail the call.
 * Answers are read by {@code Content-Length}, chunked, or up to the end of the connection. No redirects,
 * proxies, cookies, authentication or TLS. Thread-safe.
 */
public final class PlainHttpClient extends HttpClient {
    /** How long a connection may idle in the pool (servers close idle connections after 30 s or more). */
    public static final Duration MAX_IDLE = Duration.ofSeconds(10);

    private static final int BUFFER = 8192;
    private static final int MAX_HEAD_BYTES = 64 * 1024;
    /** Interim (1xx) answers read before the final one, at most. */
    static final int MAX_INTERIM_ANSWERS = 10;
    /** The largest answer body read (a processor's answers are small JSON documents). */
    static final int MAX_BODY_BYTES = 16 * 1024 * 1024;
    /** Header names this client writes itself. */
    private static final Set<String> OWN_HEADERS = Set.of("host", "content-length", "connection", "transfer-encoding");

    private static final String USER_AGENT = "exactly-psp-client";

    private final Duration connectTimeout;
    private final Map<String, ConcurrentLinkedDeque<Connection>> pools = new ConcurrentHashMap<>();
    private volatile boolean closed;

    public PlainHttpClient(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        URI uri = request.uri();
        if (!"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
            throw new IllegalArgumentException("only plain http URIs with a host: " + uri);
        }
        if (closed) {
            throw new IOException("client closed");
        }
        long deadline =
                request.timeout().map(t -> System.nanoTime() + t.toNanos()).orElse(Long.MAX_VALUE);
        byte[] body = body(request, deadline);
        int port = uri.getPort() == -1 ? 80 : uri.getPort();
        String authority = uri.getHost() + ":" + port;
        ByteBuffer message = message(request, uri, authority, body);
        Connection connection = pooled(authority);
        Answer answer;
        if (connection != null) {
            try {
                answer = exchange(connection, message, request, deadline);
            } catch (NoAnswer e) {
                // The server closed the pooled connection as it was reused, before any byte of an answer:
                // it dropped the request unread, or it read it and answered nothing. Sent once more, on a new
                // connection, only when a second delivery cannot act twice.
                if (!resendable(request)) {
                    throw e;
                }
                connection = open(uri.getHost(), port, deadline);
                message.rewind();
                answer = exchange(connection, message, request, deadline);
            }
        } else {
            connection = open(uri.getHost(), port, deadline);
            answer = exchange(connection, message, request, deadline);
        }
        if (answer.reusable() && !closed) {
            connection.idleSince = System.nanoTime();
            pools.computeIfAbsent(authority, a -> new ConcurrentLinkedDeque<>()).push(connection);
        } else {
            connection.close();
        }
        return new Response<>(request, answer.status(), answer.headers(), deliver(handler, answer));
    }

    /** Writes the request and reads its answer; the connection is closed when that fails. */
    private static Answer exchange(Connection connection, ByteBuffer message, HttpRequest request, long deadline)
            throws IOException {
        try {
            try {
                connection.channel.write(message);
            } catch (IOException e) {
                // reset or broken pipe: the server had closed the connection; no answer can come on it
                NoAnswer lost = new NoAnswer("connection lost while sending the request: " + e.getMessage());
                lost.initCause(e);
                throw lost;
            }
            return connection.read(request.method(), deadline);
        } catch (SocketTimeoutException e) {
            connection.close();
            throw timeout(request, e);
        } catch (IOException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * Whether a request may be delivered twice here: a method without effects. A request with effects is
     * not, even with an {@code Idempotency-Key}: its caller learns that the connection was lost and decides
     * ({@code IdempotentHttpClient} sends it again with the same key, after its backoff, and counts it).
     */
    private static boolean resendable(HttpRequest request) {
        String method = request.method();
        return method.equals("GET") || method.equals("HEAD") || method.equals("OPTIONS");
    }

    /** The connection ended before the first byte of an answer. */
    static final class NoAnswer extends EOFException {
        NoAnswer(String message) {
            super(message);
        }
    }

    private static HttpTimeoutException timeout(HttpRequest request, SocketTimeoutException cause) {
        HttpTimeoutException e = new HttpTimeoutException("no answer within "
                + request.timeout().orElse(null) + " from " + request.method() + " " + request.uri());
        e.initCause(cause);
        return e;
    }

    /** The newest connection to {@code authority} still open and not idle too long; older idle ones are closed. */
    private @Nullable Connection pooled(String authority) {
        ConcurrentLinkedDeque<Connection> pool = pools.get(authority);
        if (pool == null) {
            return null;
        }
        Connection c;
        while ((c = pool.poll()) != null) {
            if (System.nanoTime() - c.idleSince < MAX_IDLE.toNanos() && c.stillOpen()) {
                return c;
            }
            c.close();
        }
        return null;
    }

    private Connection open(String host, int port, long deadline) throws IOException {
        long millis = connectTimeout.toMillis();
        long left = (deadline - System.nanoTime()) / 1_000_000;
        if (deadline != Long.MAX_VALUE) {
            millis = Math.max(1, Math.min(millis, left));
        }
        SocketChannel channel = SocketChannel.open();
        try {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.socket().connect(new InetSocketAddress(host, port), (int) Math.min(Integer.MAX_VALUE, millis));
            return new Connection(channel);
        } catch (SocketTimeoutException e) {
            channel.close();
            HttpConnectTimeoutException timeout =
                    new HttpConnectTimeoutException("connect to " + host + ":" + port + " timed out");
            timeout.initCause(e);
            throw timeout;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** The request's head and body, in one buffer. */
    private static ByteBuffer message(HttpRequest request, URI uri, String authority, byte[] body) {
        StringBuilder head = new StringBuilder(256);
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        head.append(request.method()).append(' ').append(path);
        if (uri.getRawQuery() != null) {
            head.append('?').append(uri.getRawQuery());
        }
        head.append(" HTTP/1.1\r\nHost: ")
                .append(uri.getPort() == -1 ? uri.getHost() : authority)
                .append("\r\n");
        boolean userAgent = false;
        for (Map.Entry<String, List<String>> header : request.headers().map().entrySet()) {
            String name = header.getKey();
            if (OWN_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
                continue;
            }
            userAgent |= name.equalsIgnoreCase("User-Agent");
            for (String value : header.getValue()) {
                head.append(name).append(": ").append(value).append("\r\n");
            }
        }
        if (!userAgent) {
            head.append("User-Agent: ").append(USER_AGENT).append("\r\n");
        }
        if (body.length > 0
                || (request.bodyPublisher().map(p -> p.contentLength() >= 0).orElse(false)
                        && !request.method().equals("GET"))) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        return ByteBuffer.allocate(headBytes.length + body.length)
                .put(headBytes)
                .put(body)
                .flip();
    }

    /** The request body, collected from its publisher (the JDK's byte-array publisher hands it over at once). */
    private static byte[] body(HttpRequest request, long deadline) throws IOException, InterruptedException {
        HttpRequest.BodyPublisher publisher = request.bodyPublisher().orElse(null);
        if (publisher == null || publisher.contentLength() == 0) {
            return new byte[0];
        }
        ByteArrayOutputStream out =
                new ByteArrayOutputStream((int) Math.max(64, Math.min(publisher.contentLength(), 1 << 20)));
        CompletableFuture<byte[]> done = new CompletableFuture<>();
        publisher.subscribe(new Flow.Subscriber<>() {
            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(ByteBuffer item) {
                byte[] bytes = new byte[item.remaining()];
                item.get(bytes);
                out.writeBytes(bytes);
            }

            @Override
            public void onError(Throwable failure) {
                done.completeExceptionally(failure);
            }

            @Override
            public void onComplete() {
                done.complete(out.toByteArray());
            }
        });
        try {
            return deadline == Long.MAX_VALUE
                    ? done.get()
                    : done.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new IOException("request body failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new HttpTimeoutException("request body not ready within the request timeout");
        }
    }

    private static <T> T deliver(HttpResponse.BodyHandler<T> handler, Answer answer) throws IOException {
        HttpResponse.BodySubscriber<T> subscriber = handler.apply(new HttpResponse.ResponseInfo() {
            @Override
            public int statusCode() {
                return answer.status();
            }

            @Override
            public HttpHeaders headers() {
                return answer.headers();
            }

            @Override
            public Version version() {
                return Version.HTTP_1_1;
            }
        });
        subscriber.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {}

            @Override
            public void cancel() {}
        });
        if (answer.body().length > 0) {
            subscriber.onNext(List.of(ByteBuffer.wrap(answer.body())));
        }
        subscriber.onComplete();
        try {
            return subscriber.getBody().toCompletableFuture().get();
        } catch (ExecutionException e) {
            throw new IOException("reading the answer's body failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the answer's body", e);
        }
    }

    /** An answer as read: whether its connection may carry the next request. */
    private record Answer(int status, HttpHeaders headers, byte[] body, boolean reusable) {}

    /** One connection and its input buffer. */
    private static final class Connection {
        final SocketChannel channel;
        final InputStream in;
        final ByteBuffer probe = ByteBuffer.allocate(1);
        final byte[] buffer = new byte[BUFFER];
        int position;
        int limit;
        volatile long idleSince;

        Connection(SocketChannel channel) throws IOException {
            this.channel = channel;
            this.in = channel.socket().getInputStream();
        }

        /** Whether the server has neither closed this idle connection nor sent anything on it. */
        boolean stillOpen() {
            try {
                channel.configureBlocking(false);
                probe.clear();
                int n = channel.read(probe);
                channel.configureBlocking(true);
                return n == 0;
            } catch (IOException | RuntimeException e) {
                return false;
            }
        }

        Answer read(String method, long deadline) throws IOException {
            int status;
            Map<String, List<String>> headers;
            boolean http10;
            int interim = 0;
            do {
                String statusLine = interim == 0 ? firstLine(deadline) : line(deadline);
                if (++interim > MAX_INTERIM_ANSWERS) {
                    throw new IOException("more than " + MAX_INTERIM_ANSWERS + " interim (1xx) answers");
                }
                // HTTP/1.x SP three digits (SP reason): "HTTP/1.1 2000" is not 200, nor "HTTP/1.1 -01" anything
                if (!statusLine.startsWith("HTTP/1.")
                        || statusLine.length() < 12
                        || statusLine.charAt(8) != ' '
                        || !Character.isDigit(statusLine.charAt(7))
                        || (statusLine.length() > 12 && statusLine.charAt(12) != ' ')) {
                    throw new IOException("not an HTTP/1.x status line: " + printable(statusLine));
                }
                http10 = statusLine.startsWith("HTTP/1.0");
                status = 0;
                for (int i = 9; i < 12; i++) {
                    char digit = statusLine.charAt(i);
                    if (digit < '0' || digit > '9') {
                        throw new IOException("bad status line: " + printable(statusLine));
                    }
                    status = status * 10 + (digit - '0');
                }
                headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
                int size = 0;
                for (String line = line(deadline); !line.isEmpty(); line = line(deadline)) {
                    size += line.length();
                    int colon = line.indexOf(':');
                    if (colon <= 0 || size > MAX_HEAD_BYTES || line.charAt(0) == ' ' || line.charAt(0) == '\t') {
                        // a line starting with white space continues the one before (obsolete folding): refused,
                        // or " Content-Length: 5" would have been read as a header of its own
                        throw new IOException("bad header line: " + printable(line));
                    }
                    headers.computeIfAbsent(line.substring(0, colon).strip(), n -> new ArrayList<>(1))
                            .add(line.substring(colon + 1).strip());
                }
            } while (status >= 100 && status < 200);
            HttpHeaders answerHeaders = HttpHeaders.of(headers, (name, value) -> true);
            boolean keepAlive = !http10
                    && answerHeaders.allValues("Connection").stream().noneMatch(v -> v.equalsIgnoreCase("close"));
            byte[] body;
            if (method.equals("HEAD") || status == 204 || status == 304) {
                body = new byte[0];
            } else if (answerHeaders.allValues("Transfer-Encoding").stream()
                    .anyMatch(v -> v.toLowerCase(Locale.ROOT).contains("chunked"))) {
                if (answerHeaders.firstValue("Content-Length").isPresent()) {
                    // both framings: the body is read as chunked, and the connection not trusted again
                    keepAlive = false;
                }
                body = chunked(deadline);
            } else if (answerHeaders.firstValue("Content-Length").isPresent()) {
                long length = -1;
                for (String value : answerHeaders.allValues("Content-Length")) {
                    for (String part : value.split(",", -1)) {
                        long one;
                        try {
                            one = Long.parseLong(part.strip());
                        } catch (NumberFormatException e) {
                            throw new IOException("bad Content-Length", e);
                        }
                        if (length >= 0 && one != length) {
                            throw new IOException("Content-Length values disagree: " + printable(value));
                        }
                        length = one;
                    }
                }
                if (length < 0) {
                    throw new IOException("bad Content-Length: " + length);
                }
                if (length > MAX_BODY_BYTES) {
                    throw tooLarge();
                }
                body = exactly((int) length, deadline);
            } else {
                keepAlive = false;
                body = toEnd(deadline);
            }
            return new Answer(status, answerHeaders, body, keepAlive && nothingLeft());
        }

        private boolean nothingLeft() {
            return position == limit;
        }

        private void timeout(long deadline) throws SocketTimeoutException, java.net.SocketException {
            if (deadline == Long.MAX_VALUE) {
                channel.socket().setSoTimeout(0);
                return;
            }
            long millis = (deadline - System.nanoTime() + 999_999) / 1_000_000;
            if (millis <= 0) {
                throw new SocketTimeoutException("request timeout");
            }
            channel.socket().setSoTimeout((int) Math.min(Integer.MAX_VALUE, millis));
        }

        /** Reads more into the buffer (which is empty); false at the end of the connection. */
        private boolean fill(long deadline) throws IOException {
            timeout(deadline);
            int n = in.read(buffer, 0, buffer.length);
            position = 0;
            limit = Math.max(0, n);
            return n > 0;
        }

        private int next(long deadline) throws IOException {
            if (position == limit && !fill(deadline)) {
                return -1;
            }
            return buffer[position++] & 0xff;
        }

        /** The answer's first line; {@link NoAnswer} when the connection ends before its first byte. */
        private String firstLine(long deadline) throws IOException {
            if (position == limit && !fill(deadline)) {
                throw new NoAnswer("connection closed before an answer");
            }
            return line(deadline);
        }

        /** A line up to CRLF (or LF), without it, as ISO-8859-1. */
        private String line(long deadline) throws IOException {
            StringBuilder line = new StringBuilder(64);
            while (true) {
                int b = next(deadline);
                if (b < 0) {
                    throw new EOFException(
                            line.isEmpty() ? "connection closed before an answer" : "connection closed mid-line");
                }
                if (b == '\n') {
                    int end = line.length();
                    if (end > 0 && line.charAt(end - 1) == '\r') {
                        line.setLength(end - 1);
                    }
                    return line.toString();
                }
                if (line.length() > MAX_HEAD_BYTES) {
                    throw new IOException("header line too long");
                }
                line.append((char) b);
            }
        }

        private byte[] exactly(int length, long deadline) throws IOException {
            byte[] body = new byte[length];
            int read = Math.min(length, limit - position);
            System.arraycopy(buffer, position, body, 0, read);
            position += read;
            while (read < length) {
                timeout(deadline);
                int n = in.read(body, read, length - read);
                if (n < 0) {
                    throw new EOFException("connection closed after " + read + " of " + length + " body bytes");
                }
                read += n;
            }
            return body;
        }

        private byte[] chunked(long deadline) throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            while (true) {
                String size = line(deadline);
                int semicolon = size.indexOf(';');
                int length;
                try {
                    length = Integer.parseInt((semicolon < 0 ? size : size.substring(0, semicolon)).strip(), 16);
                } catch (NumberFormatException e) {
                    throw new IOException("bad chunk size: " + printable(size), e);
                }
                if (length < 0) {
                    throw new IOException("bad chunk size: " + printable(size));
                }
                if (length == 0) {
                    while (!line(deadline).isEmpty()) {
                        // trailers are not used
                    }
                    return out.toByteArray();
                }
                if (length > MAX_BODY_BYTES - out.size()) {
                    throw tooLarge();
                }
                out.writeBytes(exactly(length, deadline));
                if (!line(deadline).isEmpty()) {
                    throw new IOException("chunk not followed by CRLF");
                }
            }
        }

        private byte[] toEnd(long deadline) throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(buffer, position, limit - position);
            position = limit;
            while (fill(deadline)) {
                if (limit > MAX_BODY_BYTES - out.size()) {
                    throw tooLarge();
                }
                out.write(buffer, 0, limit);
                position = limit;
            }
            return out.toByteArray();
        }

        private static IOException tooLarge() {
            return new IOException("answer body larger than " + MAX_BODY_BYTES + " bytes");
        }

        void close() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }

        private static String printable(String s) {
            String cut = s.length() > 80 ? s.substring(0, 80) + "..." : s;
            return cut.replaceAll("[^\\x20-\\x7e]", "?");
        }
    }

    private record Response<T>(HttpRequest request, int statusCode, HttpHeaders headers, T body)
            implements HttpResponse<T> {
        @Override
        public Optional<HttpResponse<T>> previousResponse() {
            return Optional.empty();
        }

        @Override
        public Optional<javax.net.ssl.SSLSession> sslSession() {
            return Optional.empty();
        }

        @Override
        public URI uri() {
            return request.uri();
        }

        @Override
        public Version version() {
            return Version.HTTP_1_1;
        }
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        CompletableFuture<HttpResponse<T>> answer = new CompletableFuture<>();
        Thread.ofVirtual().name("psp-client-async").start(() -> {
            try {
                answer.complete(send(request, handler));
            } catch (Throwable failure) {
                answer.completeExceptionally(failure);
            }
        });
        return answer;
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(
            HttpRequest request,
            HttpResponse.BodyHandler<T> handler,
            HttpResponse.@Nullable PushPromiseHandler<T> pushPromiseHandler) {
        return sendAsync(request, handler);
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
        return Optional.empty();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return Optional.of(connectTimeout);
    }

    @Override
    public Redirect followRedirects() {
        return Redirect.NEVER;
    }

    @Override
    public Optional<ProxySelector> proxy() {
        return Optional.empty();
    }

    @Override
    public SSLContext sslContext() {
        try {
            return SSLContext.getDefault();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public SSLParameters sslParameters() {
        return new SSLParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
        return Optional.empty();
    }

    @Override
    public Version version() {
        return Version.HTTP_1_1;
    }

    @Override
    public Optional<Executor> executor() {
        return Optional.empty();
    }

    /** Closes the idle connections; calls after this fail. */
    @Override
    public void shutdown() {
        closed = true;
        pools.values().forEach(pool -> {
            Connection c;
            while ((c = pool.poll()) != null) {
                c.close();
            }
        });
    }

    @Override
    public void shutdownNow() {
        shutdown();
    }

    @Override
    public boolean awaitTermination(Duration duration) {
        return true;
    }

    @Override
    public boolean isTerminated() {
        return closed;
    }

    @Override
    public void close() {
        shutdown();
    }
}
