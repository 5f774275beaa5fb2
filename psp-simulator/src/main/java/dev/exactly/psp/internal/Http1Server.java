package dev.exactly.psp.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The stand-in's HTTP/1.1 server: one platform thread per connection, which reads each request with
 * blocking reads, runs the handler and writes the answer, head and body, in one write. A request costs its
 * server one read and one write; no selector, no hand-off between threads (the JDK's {@code HttpServer}
 * selects on a dispatcher thread, hands every exchange to an executor and registers the connection with
 * its selector again after each answer, which made the stand-in cost the payment service that runs it in
 * process more CPU than the processor client calling it).
 *
 * <p>What it accepts: origin-form or absolute-form targets that {@link URI} parses, HTTP/1.1 and 1.0
 * (1.0 closes after its answer unless it asks to keep the connection), bodies by {@code Content-Length}
 * or {@code chunked}, {@code Expect: 100-continue} (the interim answer is sent when the handler first reads
 * the body). What it refuses, with an answer rendered by {@link Errors} and the connection closed: a head
 * over {@link #MAX_HEAD_BYTES} or with over {@link #MAX_HEADER_LINES} lines (431), a malformed request line,
 * header line, chunk or {@code Content-Length}, both {@code Content-Length} and {@code Transfer-Encoding}
 * (400: a request one reader would frame differently from another), a transfer coding other than chunked
 * (501), another HTTP version (505), another expectation (417), and connections beyond the bound (503).
 * A connection whose read has waited longer than the idle timeout (between requests, or inside a head or
 * body that stopped coming) is closed. A handler that returns without answering closes its connection
 * unanswered, as a processor that drops a response does; a body the handler did not read is skipped when
 * it is small, otherwise the connection closes after the answer.
 */
public final class Http1Server implements AutoCloseable {

    /** Handles one exchange; returning without {@link Exchange#respond} closes the connection unanswered. */
    @FunctionalInterface
    public interface Handler {
        void handle(Exchange exchange) throws IOException;
    }

    /** Renders the body of an answer the server gives itself (always JSON). */
    @FunctionalInterface
    public interface Errors {
        byte[] render(int status, String code, String message);
    }

    /** The largest request head read (request line and headers). */
    public static final int MAX_HEAD_BYTES = 64 * 1024;
    /** The most header lines a request may have. */
    public static final int MAX_HEADER_LINES = 200;
    /** An unread body up to this size is skipped to keep the connection; a larger one closes it. */
    static final int MAX_SKIPPED_BODY_BYTES = 64 * 1024;

    private static final int MAX_CHUNK_LINE_BYTES = 4096;
    /** After a refusal, what the client still sends is dropped for at most this long and this much. */
    private static final int LINGER_MILLIS = 1000;

    private static final long LINGER_BYTES = 256 * 1024;
    private static final int BUFFER = 8192;

    private final ServerSocket listener;
    private final Handler handler;
    private final Errors errors;
    private final long idleNanos;
    private final int maxConnections;
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger connectionIds = new AtomicInteger();
    private final CountDownLatch closing = new CountDownLatch(1);
    private final Thread acceptor;
    private final Thread reaper;
    private volatile boolean closed;

    /**
     * Listens at once and serves until {@link #close()}.
     *
     * @param idleTimeout    how long a read may wait for a request's bytes before the connection closes
     * @param maxConnections connections open at once; one more is answered 503 and closed
     */
    public Http1Server(
            InetSocketAddress address,
            int backlog,
            Handler handler,
            Errors errors,
            Duration idleTimeout,
            int maxConnections)
            throws IOException {
        if (idleTimeout.isNegative() || idleTimeout.isZero()) {
            throw new IllegalArgumentException("idleTimeout must be positive");
        }
        if (maxConnections < 1) {
            throw new IllegalArgumentException("maxConnections must be positive");
        }
        this.handler = handler;
        this.errors = errors;
        this.idleNanos = idleTimeout.toNanos();
        this.maxConnections = maxConnections;
        this.listener = new ServerSocket();
        try {
            listener.bind(address, backlog);
        } catch (IOException e) {
            listener.close();
            throw e;
        }
        this.acceptor = Thread.ofPlatform().daemon().name("psp-http-accept").unstarted(this::accept);
        long period = Math.max(TimeUnit.MILLISECONDS.toNanos(10), Math.min(idleNanos / 4, TimeUnit.SECONDS.toNanos(1)));
        this.reaper = Thread.ofPlatform().daemon().name("psp-http-idle").unstarted(() -> reap(period));
        acceptor.start();
        reaper.start();
    }

    /** The address it listens on. */
    public InetSocketAddress address() {
        return (InetSocketAddress) listener.getLocalSocketAddress();
    }

    /** Connections open now. */
    public int connections() {
        return connections.size();
    }

    private void accept() {
        while (!closed) {
            Socket socket;
            try {
                socket = listener.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                // out of file descriptors or another passing failure: try again shortly, not in a tight loop
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                continue;
            }
            if (connections.size() >= maxConnections) {
                refuse(socket);
                continue;
            }
            Connection connection = new Connection(socket);
            connection.thread = Thread.ofPlatform()
                    .daemon()
                    .name("psp-http-" + connectionIds.incrementAndGet())
                    .unstarted(connection::run);
            connections.add(connection);
            if (closed) {
                connection.abort();
                connections.remove(connection);
                return;
            }
            connection.thread.start();
        }
    }

    private void refuse(Socket socket) {
        try (socket) {
            byte[] body = errors.render(
                    503,
                    "too_many_connections",
                    "the server has " + maxConnections + " connections open; try again shortly");
            socket.getOutputStream().write(Exchange.head(503, List.of(), body.length, true));
            socket.getOutputStream().write(body);
        } catch (IOException ignored) {
            // the client is gone already
        }
    }

    /** Closes connections whose read waited longer than the idle timeout. */
    private void reap(long periodNanos) {
        try {
            while (!closing.await(periodNanos, TimeUnit.NANOSECONDS)) {
                long now = System.nanoTime();
                for (Connection c : connections) {
                    long since = c.readingSince;
                    if (since != 0 && now - since > idleNanos) {
                        c.abort();
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops listening and closes every connection (a handler writing or reading fails; one that waits on
     * something of its own is its owner's to end), waiting up to five seconds for their threads.
     */
    @Override
    public void close() {
        closed = true;
        closing.countDown();
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Connection c : connections) {
            c.abort();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        try {
            acceptor.join(Duration.ofSeconds(5));
            reaper.join(Duration.ofSeconds(1));
            for (Connection c : connections) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                c.abort();
                Thread t = c.thread;
                if (t != null && t.isAlive()) {
                    t.join(Duration.ofNanos(left));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A request the server refuses itself; the connection closes after the answer. */
    static final class BadRequest extends IOException {
        final int status;
        final String code;

        BadRequest(int status, String code, String message) {
            super(message);
            this.status = status;
            this.code = code;
        }

        @Override
        public String getMessage() {
            return Objects.requireNonNull(super.getMessage(), "made with one");
        }
    }

    /** A request's head as read: the request line and the headers, names as sent. */
    record Head(String method, URI uri, boolean http10, List<String[]> headers) {
        @Nullable
        String first(String name) {
            for (String[] h : headers) {
                if (h[0].equalsIgnoreCase(name)) {
                    return h[1];
                }
            }
            return null;
        }

        List<String> all(String name) {
            List<String> values = new ArrayList<>(1);
            for (String[] h : headers) {
                if (h[0].equalsIgnoreCase(name)) {
                    values.add(h[1]);
                }
            }
            return values;
        }

        /** Whether a {@code Connection} header names this token. */
        boolean connectionHas(String token) {
            for (String value : all("Connection")) {
                for (String t : value.split(",", -1)) {
                    if (t.trim().equalsIgnoreCase(token)) {
                        return true;
                    }
                }
            }
            return false;
        }
    }

    /** One connection and the thread that serves it. */
    final class Connection {
        private final Socket socket;
        private byte[] buffer = new byte[BUFFER];
        private int pos;
        private int limit;
        /** When the current blocking read began, 0 while none waits. */
        volatile long readingSince;

        volatile @Nullable Thread thread;
        private @Nullable InputStream in;

        @Nullable
        OutputStream out;

        Connection(Socket socket) {
            this.socket = socket;
        }

        void abort() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closed already
            }
        }

        void run() {
            try (socket) {
                socket.setTcpNoDelay(true);
                in = socket.getInputStream();
                out = socket.getOutputStream();
                serve();
            } catch (IOException e) {
                // the connection was lost, closed by the reaper or by close(): nothing to answer
            } finally {
                connections.remove(this);
            }
        }

        private void serve() throws IOException {
            while (!closed) {
                Head head;
                try {
                    head = readHead();
                } catch (BadRequest e) {
                    answerAndClose(e, null);
                    return;
                }
                if (head == null) {
                    return; // the client closed between requests
                }
                Exchange exchange;
                try {
                    exchange = new Exchange(this, head, body(head));
                } catch (BadRequest e) {
                    answerAndClose(e, head);
                    return;
                }
                try {
                    handler.handle(exchange);
                } catch (BadRequest e) {
                    if (!exchange.responded()) {
                        answerAndClose(e, head);
                    }
                    return;
                } catch (RuntimeException e) {
                    if (!exchange.responded()) {
                        answerAndClose(new BadRequest(500, "internal_error", String.valueOf(e)), head);
                    }
                    return;
                }
                if (!exchange.responded() || exchange.closesConnection()) {
                    return; // unanswered: the client sees the connection close
                }
                if (!exchange.bodyInput().skipRest(MAX_SKIPPED_BODY_BYTES)) {
                    return;
                }
            }
        }

        /**
         * Answers a refused request and closes: the output first, then what the client still sends is read
         * and dropped for a moment (up to {@link #LINGER_BYTES}), so that closing with unread bytes does not
         * reset the connection before the client has read the answer.
         */
        private void answerAndClose(BadRequest e, @Nullable Head head) throws IOException {
            byte[] body = errors.render(e.status, e.code, e.getMessage());
            boolean headOnly = head != null && head.method().equals("HEAD");
            write(Exchange.head(e.status, List.of(), body.length, true), headOnly ? null : body);
            socket.shutdownOutput();
            socket.setSoTimeout(LINGER_MILLIS);
            InputStream i = in;
            byte[] sink = new byte[BUFFER];
            long dropped = 0;
            try {
                int n;
                while (i != null && dropped < LINGER_BYTES && (n = i.read(sink)) >= 0) {
                    dropped += n;
                }
            } catch (IOException ignored) {
                // timed out or reset: closing anyway
            }
        }

        void write(byte[] head, byte @Nullable [] body) throws IOException {
            OutputStream o = out;
            if (o == null) {
                throw new IOException("connection not open");
            }
            if (body == null || body.length == 0) {
                o.write(head);
            } else if (head.length + body.length <= 64 * 1024) {
                byte[] all = new byte[head.length + body.length];
                System.arraycopy(head, 0, all, 0, head.length);
                System.arraycopy(body, 0, all, head.length, body.length);
                o.write(all);
            } else {
                o.write(head);
                o.write(body);
            }
        }

        /** Reads more bytes into the buffer after {@code limit}; false at the end of the stream. */
        private boolean fill(int maxBuffered) throws IOException {
            if (pos == limit) {
                pos = 0;
                limit = 0;
            } else if (limit == buffer.length && pos > 0) {
                System.arraycopy(buffer, pos, buffer, 0, limit - pos);
                limit -= pos;
                pos = 0;
            }
            if (limit == buffer.length) {
                if (buffer.length >= maxBuffered) {
                    throw new IllegalStateException("buffer bound reached");
                }
                byte[] larger = new byte[Math.min(maxBuffered, buffer.length * 2)];
                System.arraycopy(buffer, 0, larger, 0, limit);
                buffer = larger;
            }
            InputStream i = in;
            if (i == null) {
                throw new IOException("connection not open");
            }
            readingSince = nonZeroNanoTime();
            int n;
            try {
                n = i.read(buffer, limit, buffer.length - limit);
            } finally {
                readingSince = 0;
            }
            if (n < 0) {
                return false;
            }
            limit += n;
            return true;
        }

        /** The next request's head, or null when the connection ends cleanly before one. */
        private @Nullable Head readHead() throws IOException {
            int emptyLines = 0;
            int scanned = pos;
            while (true) {
                // a few empty lines before a request line are skipped (RFC 9112, 2.2)
                while (pos < limit && (buffer[pos] == '\r' || buffer[pos] == '\n')) {
                    if (++emptyLines > 8) {
                        throw new BadRequest(400, "bad_request", "empty lines instead of a request line");
                    }
                    pos++;
                }
                scanned = Math.max(scanned, pos);
                int end = headEnd(scanned);
                if (end >= 0) {
                    Head head = parseHead(buffer, pos, end);
                    pos = end;
                    return head;
                }
                if (limit - pos >= MAX_HEAD_BYTES) {
                    throw new BadRequest(
                            431, "header_too_large", "the request head exceeds " + MAX_HEAD_BYTES + " bytes");
                }
                int rescanFrom = Math.max(pos, limit - 2) - pos; // filling may move the buffered bytes
                boolean more = fill(MAX_HEAD_BYTES + BUFFER);
                if (!more) {
                    if (limit == pos) {
                        return null;
                    }
                    throw new EOFException("connection ended inside a request head");
                }
                scanned = pos + rescanFrom;
            }
        }

        /** The index just after the empty line that ends a head starting at {@link #pos}, or -1. */
        private int headEnd(int from) {
            for (int i = Math.max(from, pos); i < limit; i++) {
                if (buffer[i] != '\n') {
                    continue;
                }
                if (i + 1 < limit && buffer[i + 1] == '\n') {
                    return i + 2;
                }
                if (i + 2 < limit && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') {
                    return i + 3;
                }
            }
            return -1;
        }

        private BodyInput body(Head head) throws BadRequest {
            List<String> encodings = head.all("Transfer-Encoding");
            List<String> lengths = head.all("Content-Length");
            if (!encodings.isEmpty() && !lengths.isEmpty()) {
                throw new BadRequest(
                        400, "bad_request", "a request may not carry both Content-Length and Transfer-Encoding");
            }
            String expect = head.first("Expect");
            boolean continueExpected = false;
            if (expect != null) {
                if (!expect.trim().equalsIgnoreCase("100-continue")) {
                    throw new BadRequest(417, "expectation_failed", "the only expectation met is 100-continue");
                }
                continueExpected = !head.http10();
            }
            if (!encodings.isEmpty()) {
                if (encodings.size() > 1 || !encodings.get(0).trim().equalsIgnoreCase("chunked")) {
                    throw new BadRequest(
                            501,
                            "transfer_encoding_unsupported",
                            "the only transfer coding accepted is chunked, alone");
                }
                return new BodyInput(this, -1, continueExpected);
            }
            long length = 0;
            for (int i = 0; i < lengths.size(); i++) {
                long parsed = contentLength(lengths.get(i));
                if (i > 0 && parsed != length) {
                    throw new BadRequest(400, "bad_request", "Content-Length headers disagree");
                }
                length = parsed;
            }
            return new BodyInput(this, length, continueExpected && length > 0);
        }

        // ------------------------------------------------------------ raw reads for a body

        int read(byte[] into, int off, int len) throws IOException {
            if (pos == limit && !fill(BUFFER)) {
                return -1;
            }
            int n = Math.min(len, limit - pos);
            System.arraycopy(buffer, pos, into, off, n);
            pos += n;
            return n;
        }

        int read() throws IOException {
            if (pos == limit && !fill(BUFFER)) {
                return -1;
            }
            return buffer[pos++] & 0xff;
        }
    }

    private static long nonZeroNanoTime() {
        long now = System.nanoTime();
        return now == 0 ? 1 : now;
    }

    private static long contentLength(String value) throws BadRequest {
        String v = value.trim();
        if (v.isEmpty() || v.length() > 18) {
            throw new BadRequest(400, "bad_request", "Content-Length must be a decimal number of bytes");
        }
        long n = 0;
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                throw new BadRequest(400, "bad_request", "Content-Length must be a decimal number of bytes");
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }

    // ---------------------------------------------------------------- the head

    static Head parseHead(byte[] b, int start, int end) throws BadRequest {
        List<String> lines = lines(b, start, end);
        if (lines.isEmpty()) {
            throw new BadRequest(400, "bad_request", "no request line");
        }
        String requestLine = lines.get(0);
        int sp1 = requestLine.indexOf(' ');
        int sp2 = sp1 < 0 ? -1 : requestLine.indexOf(' ', sp1 + 1);
        if (sp1 <= 0 || sp2 < 0 || requestLine.indexOf(' ', sp2 + 1) >= 0) {
            throw new BadRequest(400, "bad_request", "malformed request line");
        }
        String method = requestLine.substring(0, sp1);
        String target = requestLine.substring(sp1 + 1, sp2);
        String version = requestLine.substring(sp2 + 1);
        if (!isToken(method)) {
            throw new BadRequest(400, "bad_request", "malformed method");
        }
        boolean http10;
        if (version.equals("HTTP/1.1")) {
            http10 = false;
        } else if (version.equals("HTTP/1.0")) {
            http10 = true;
        } else if (version.matches("HTTP/[0-9]\\.[0-9]")) {
            throw new BadRequest(505, "http_version_not_supported", "only HTTP/1.1 and HTTP/1.0 are served");
        } else {
            throw new BadRequest(400, "bad_request", "malformed HTTP version");
        }
        URI uri = target(target);
        if (lines.size() - 1 > MAX_HEADER_LINES) {
            throw new BadRequest(431, "header_too_large", "more than " + MAX_HEADER_LINES + " header lines");
        }
        List<String[]> headers = new ArrayList<>(lines.size() - 1);
        for (int i = 1; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.charAt(0) == ' ' || line.charAt(0) == '\t') {
                throw new BadRequest(400, "bad_request", "folded header lines are not accepted");
            }
            int colon = line.indexOf(':');
            if (colon <= 0 || !isToken(line.substring(0, colon))) {
                throw new BadRequest(400, "bad_request", "malformed header line");
            }
            String value = line.substring(colon + 1).strip();
            for (int k = 0; k < value.length(); k++) {
                char c = value.charAt(k);
                if ((c < 0x20 && c != '\t') || c == 0x7f) {
                    throw new BadRequest(400, "bad_request", "control character in a header value");
                }
            }
            headers.add(new String[] {line.substring(0, colon), value});
        }
        return new Head(method, uri, http10, headers);
    }

    private static URI target(String target) throws BadRequest {
        if (!target.startsWith("/")
                && !target.regionMatches(true, 0, "http://", 0, 7)
                && !target.regionMatches(true, 0, "https://", 0, 8)) {
            throw new BadRequest(400, "bad_request", "the request target must be a path");
        }
        try {
            URI uri = new URI(target);
            if (uri.getRawPath() == null || uri.getRawPath().isEmpty()) {
                uri = new URI(uri.getScheme(), uri.getRawAuthority(), "/", uri.getRawQuery(), null);
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new BadRequest(400, "bad_request", "malformed request target");
        }
    }

    /** Splits a head into its lines (CRLF or LF); a CR anywhere else is refused. */
    private static List<String> lines(byte[] b, int start, int end) throws BadRequest {
        List<String> lines = new ArrayList<>(12);
        int lineStart = start;
        for (int i = start; i < end; i++) {
            if (b[i] == '\n') {
                int lineEnd = i > lineStart && b[i - 1] == '\r' ? i - 1 : i;
                if (lineEnd > lineStart) {
                    lines.add(new String(b, lineStart, lineEnd - lineStart, StandardCharsets.ISO_8859_1));
                }
                lineStart = i + 1;
            } else if (b[i] == '\r' && (i + 1 >= end || b[i + 1] != '\n')) {
                throw new BadRequest(400, "bad_request", "a bare CR in the request head");
            } else if (b[i] == 0) {
                throw new BadRequest(400, "bad_request", "a NUL in the request head");
            }
        }
        return lines;
    }

    private static boolean isToken(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- bodies

    /** A request body by {@code Content-Length} ({@code length ≥ 0}) or chunked ({@code length < 0}). */
    static final class BodyInput extends InputStream {
        private final Connection connection;
        private final boolean chunked;
        private long remaining;
        private boolean continueExpected;
        private boolean ended;
        private boolean started;

        BodyInput(Connection connection, long length, boolean continueExpected) {
            this.connection = connection;
            this.chunked = length < 0;
            this.remaining = chunked ? 0 : length;
            this.ended = !chunked && length == 0;
            this.continueExpected = continueExpected;
        }

        private void start() throws IOException {
            if (continueExpected) {
                continueExpected = false;
                connection.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), null);
            }
            started = true;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (ended) {
                return -1;
            }
            if (!started) {
                start();
            }
            if (chunked && remaining == 0) {
                remaining = nextChunk();
                if (remaining == 0) {
                    trailers();
                    ended = true;
                    return -1;
                }
            }
            int n = connection.read(b, off, (int) Math.min(len, remaining));
            if (n < 0) {
                throw new EOFException("connection ended inside a request body");
            }
            remaining -= n;
            if (remaining == 0) {
                if (chunked) {
                    crlf();
                } else {
                    ended = true;
                }
            }
            return n;
        }

        /**
         * Reads and drops what the handler left of the body, up to {@code max} bytes; false when that was
         * not all of it (or the client still waits for 100 Continue), and the connection must close.
         */
        boolean skipRest(int max) throws IOException {
            if (ended) {
                return true;
            }
            if (continueExpected) {
                return false;
            }
            if (!chunked && remaining > max) {
                return false;
            }
            byte[] sink = new byte[Math.min(BUFFER, max)];
            long skipped = 0;
            int n;
            while ((n = read(sink, 0, sink.length)) >= 0) {
                skipped += n;
                if (skipped > max) {
                    return false;
                }
            }
            return true;
        }

        private long nextChunk() throws IOException {
            String line = line();
            int semicolon = line.indexOf(';');
            String size = (semicolon < 0 ? line : line.substring(0, semicolon)).strip();
            if (size.isEmpty() || size.length() > 15) {
                throw new BadRequest(400, "bad_request", "malformed chunk size");
            }
            long n = 0;
            for (int i = 0; i < size.length(); i++) {
                int d = Character.digit(size.charAt(i), 16);
                if (d < 0) {
                    throw new BadRequest(400, "bad_request", "malformed chunk size");
                }
                n = n * 16 + d;
            }
            return n;
        }

        private void trailers() throws IOException {
            int total = 0;
            while (true) {
                String line = line();
                if (line.isEmpty()) {
                    return;
                }
                total += line.length();
                if (total > MAX_HEAD_BYTES) {
                    throw new BadRequest(431, "header_too_large", "the chunked body's trailers are too large");
                }
            }
        }

        private void crlf() throws IOException {
            if (!line().isEmpty()) {
                throw new BadRequest(400, "bad_request", "a chunk's data is longer than its size");
            }
        }

        /** One line of the chunked framing, without its CRLF (or LF). */
        private String line() throws IOException {
            StringBuilder s = new StringBuilder(16);
            while (true) {
                int c = connection.read();
                if (c < 0) {
                    throw new EOFException("connection ended inside a chunked body");
                }
                if (c == '\n') {
                    int len = s.length();
                    if (len > 0 && s.charAt(len - 1) == '\r') {
                        s.setLength(len - 1);
                    }
                    return s.toString();
                }
                if (s.length() >= MAX_CHUNK_LINE_BYTES) {
                    throw new BadRequest(400, "bad_request", "a chunk line is too long");
                }
                s.append((char) c);
            }
        }
    }

    /** For messages: the reason phrase of a status, empty when it has none here. */
    static String reason(int status) {
        return switch (status) {
            case 100 -> "Continue";
            case 200 -> "OK";
            case 201 -> "Created";
            case 400 -> "Bad Request";
            case 402 -> "Payment Required";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 409 -> "Conflict";
            case 413 -> "Content Too Large";
            case 417 -> "Expectation Failed";
            case 422 -> "Unprocessable Content";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            case 505 -> "HTTP Version Not Supported";
            default -> status >= 100 && status < 600 ? "" : String.valueOf(status);
        };
    }
}
