package dev.exactly.payments.webhooks;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import org.jspecify.annotations.Nullable;

/**
 * One webhook attempt on the wire: an HTTP/1.1 {@code POST} sent to addresses resolved and judged beforehand
 * ({@link Destinations#resolve}), never to whatever the name resolves to by then. TLS is checked against the
 * URL's host (its certificate's names, and SNI), not against the address. Only the answer's status line is
 * read: interim {@code 1xx} answers are skipped, the body never is read, and the connection is closed
 * ({@code Connection: close}), so an endless or trickling answer cannot hold the worker.
 *
 * <p>Where the JVM is told to use an HTTP proxy for the URL ({@code https.proxyHost} and the like, read by
 * {@link ProxySelector#getDefault()}), the attempt goes through it instead: {@code CONNECT} for https, the
 * absolute URL for http; the proxy then resolves the name.
 *
 * <p>Bounds: connecting (each address in turn, until one accepts) within the connect timeout; the TLS
 * handshake, the request and the status line within the request timeout, a deadline over the whole exchange
 * (a server that sends a byte now and then does not extend it): the socket is closed when it passes.
 */
final class WebhookPost {
    /** The longest status line (or interim answer's headers) read before the answer is called malformed. */
    static final int MAX_HEAD = 16 * 1024;

    /** Closes sockets whose deadline passed; one daemon thread for every worker. */
    private static final ScheduledThreadPoolExecutor DEADLINES = deadlines();

    /** No address accepted the connection within the connect timeout. */
    static final class ConnectTimeout extends IOException {
        ConnectTimeout(String message) {
            super(message);
        }
    }

    /** The status line did not come within the request timeout. */
    static final class AnswerTimeout extends IOException {
        AnswerTimeout(String message) {
            super(message);
        }
    }

    private WebhookPost() {}

    private static ScheduledThreadPoolExecutor deadlines() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "payments-webhook-deadlines");
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    /** Where an attempt connects: to addresses judged beforehand, or through the HTTP proxy the JVM is told to use. */
    sealed interface Route {
        /** Straight to one of {@code addresses}, the ones the host resolved to when it was judged. */
        record Direct(List<InetAddress> addresses) implements Route {}

        /**
         * Through an HTTP proxy: {@code CONNECT host:port} for https, the absolute URL as the target for http. The
         * proxy resolves the name: the egress policy is the proxy's.
         */
        record Proxied(InetSocketAddress proxy) implements Route {}
    }

    /**
     * The HTTP proxy {@code proxies} chooses for {@code url} ({@link ProxySelector#getDefault()} reads the JVM's
     * {@code https.proxyHost}, {@code http.proxyHost} and {@code http.nonProxyHosts}), or null to connect
     * directly. Only the first choice counts, and only an HTTP proxy: a SOCKS one, like none, is a direct
     * connection (as the JDK's HTTP client does).
     */
    static @Nullable InetSocketAddress proxyFor(URI url, @Nullable ProxySelector proxies) {
        if (proxies == null) {
            return null;
        }
        List<Proxy> chosen;
        try {
            chosen = proxies.select(URI.create(url.toASCIIString()));
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (chosen == null
                || chosen.isEmpty()
                || chosen.getFirst().type() != Proxy.Type.HTTP
                || !(chosen.getFirst().address() instanceof InetSocketAddress address)) {
            return null;
        }
        return address.isUnresolved() ? new InetSocketAddress(address.getHostString(), address.getPort()) : address;
    }

    /**
     * Sends {@code body} to {@code url} (http or https) by {@code route}, with {@code headers} (besides
     * {@code Host}, {@code Content-Length} and {@code Connection}), and returns the answer's status.
     *
     * @throws ConnectTimeout no address accepted within {@code connectTimeout}
     * @throws AnswerTimeout  no status line within {@code requestTimeout} of connecting
     * @throws javax.net.ssl.SSLException the TLS handshake failed (the certificate does not name the host, …)
     * @throws IOException    the connection failed, the proxy refused the tunnel, or the answer is not HTTP
     */
    static int send(
            URI url,
            Route route,
            Map<String, String> headers,
            byte[] body,
            Duration connectTimeout,
            Duration requestTimeout,
            SSLSocketFactory tls)
            throws IOException {
        // characters beyond ASCII in the path or query (a URL may hold them) are sent percent-encoded as UTF-8
        URI uri = URI.create(url.toASCIIString());
        boolean secure = "https".equalsIgnoreCase(uri.getScheme());
        if (!secure && !"http".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("not an http or https URL");
        }
        int port = uri.getPort() != -1 ? uri.getPort() : secure ? 443 : 80;
        String authority = uri.getHost() + (port == (secure ? 443 : 80) ? "" : ":" + port);
        Socket plain = switch (route) {
            case Route.Direct direct -> connect(direct.addresses(), port, connectTimeout);
            case Route.Proxied proxied
            when proxied.proxy().isUnresolved() ->
                throw new UnknownHostException("the proxy " + proxied.proxy().getHostString() + " does not resolve");
            case Route.Proxied proxied ->
                connect(List.of(proxied.proxy().getAddress()), proxied.proxy().getPort(), connectTimeout);
        };
        AtomicBoolean late = new AtomicBoolean();
        ScheduledFuture<?> deadline = DEADLINES.schedule(
                () -> {
                    late.set(true);
                    closeQuietly(plain);
                },
                requestTimeout.toNanos(),
                TimeUnit.NANOSECONDS);
        try {
            boolean proxied = route instanceof Route.Proxied;
            if (proxied && secure) {
                tunnel(plain, uri.getHost() + ":" + port);
            }
            Socket socket = secure ? handshake(plain, bare(uri.getHost()), port, tls) : plain;
            String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            String target = (proxied && !secure ? "http://" + authority : "")
                    + path
                    + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
            OutputStream out = socket.getOutputStream();
            out.write(head(target, authority, headers, body.length));
            out.write(body);
            out.flush();
            return status(new BufferedInputStream(socket.getInputStream(), 1024));
        } catch (IOException e) {
            if (late.get()) {
                throw new AnswerTimeout("no status line within " + requestTimeout);
            }
            throw e;
        } finally {
            deadline.cancel(false);
            closeQuietly(plain);
        }
    }

    /** Asks the proxy on {@code socket} for a tunnel to {@code hostPort}; returns once it answered 2xx. */
    private static void tunnel(Socket socket, String hostPort) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(ascii("CONNECT " + hostPort + " HTTP/1.1\r\nHost: " + hostPort + "\r\n\r\n"));
        out.flush();
        // unbuffered: nothing past the proxy's answer may be taken from the tunnel
        int status = status(socket.getInputStream(), false);
        if (status < 200 || status > 299) {
            throw new IOException("the proxy answered " + status + " to CONNECT");
        }
    }

    /** A connected socket to the first of {@code addresses} that accepts, all within {@code timeout}. */
    private static Socket connect(List<InetAddress> addresses, int port, Duration timeout) throws IOException {
        long end = System.nanoTime() + timeout.toNanos();
        IOException last = null;
        for (InetAddress address : addresses) {
            long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
            if (left < 1) {
                break;
            }
            Socket socket = new Socket();
            try {
                socket.setTcpNoDelay(true);
                socket.connect(new InetSocketAddress(address, port), (int) Math.min(left, Integer.MAX_VALUE));
                return socket;
            } catch (IOException e) {
                closeQuietly(socket);
                last = e;
            }
        }
        if (last == null || last instanceof SocketTimeoutException) {
            throw new ConnectTimeout("no address accepted within " + timeout);
        }
        throw last;
    }

    /** TLS over {@code plain}, checked against {@code host}: its certificate must name it; SNI names it too. */
    private static SSLSocket handshake(Socket plain, String host, int port, SSLSocketFactory tls) throws IOException {
        SSLSocket socket = (SSLSocket) tls.createSocket(plain, host, port, true);
        SSLParameters parameters = socket.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        if (!isLiteral(host)) {
            parameters.setServerNames(List.of(new SNIHostName(host)));
        }
        socket.setSSLParameters(parameters);
        socket.startHandshake();
        return socket;
    }

    /** The request line and headers, up to the empty line. */
    private static byte[] head(String target, String authority, Map<String, String> headers, int length) {
        StringBuilder head = new StringBuilder(512)
                .append("POST ")
                .append(target)
                .append(" HTTP/1.1\r\n")
                .append("Host: ")
                .append(authority)
                .append("\r\n");
        headers.forEach(
                (name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
        head.append("Content-Length: ").append(length).append("\r\n").append("Connection: close\r\n\r\n");
        return ascii(head.toString());
    }

    /** {@code text} in ASCII; it must be printable ASCII, CR and LF. */
    private static byte[] ascii(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c > 0x7e || (c < 0x20 && c != '\r' && c != '\n')) {
                throw new IllegalArgumentException("a request head must be printable ASCII");
            }
        }
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /** The first final status: interim (1xx) answers and their headers are skipped. */
    private static int status(InputStream in) throws IOException {
        return status(in, true);
    }

    /**
     * The status of the answer on {@code in}; with {@code finalOnly} interim (1xx) answers are skipped, without it
     * the answer's headers are read to their end (a proxy's answer to {@code CONNECT}, which the tunnel follows).
     */
    private static int status(InputStream in, boolean finalOnly) throws IOException {
        int read = 0;
        while (true) {
            String line = line(in, MAX_HEAD - read);
            read += line.length() + 2;
            if (!line.matches("HTTP/1\\.[01] [1-5][0-9][0-9]( .*)?")) {
                throw new IOException("not an HTTP/1.1 status line");
            }
            int status = Integer.parseInt(line.substring(9, 12));
            if (status >= 200 && finalOnly) {
                return status;
            }
            String header;
            do {
                header = line(in, MAX_HEAD - read);
                read += header.length() + 2;
            } while (!header.isEmpty());
            if (!finalOnly) {
                return status;
            }
        }
    }

    /** One line ending in CRLF (or LF), without it, of at most {@code max} bytes. */
    private static String line(InputStream in, int max) throws IOException {
        StringBuilder line = new StringBuilder(64);
        while (true) {
            int b = in.read();
            if (b == -1) {
                throw new IOException("the connection closed before a status line");
            }
            if (b == '\n') {
                int end = line.length();
                return end > 0 && line.charAt(end - 1) == '\r' ? line.substring(0, end - 1) : line.toString();
            }
            if (line.length() >= max) {
                throw new IOException("an answer head longer than " + MAX_HEAD + " bytes");
            }
            line.append((char) b);
        }
    }

    /** The host without the brackets of an IPv6 literal. */
    private static String bare(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    private static boolean isLiteral(String host) {
        return host.indexOf(':') >= 0 || host.matches("[0-9.]+");
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing: nothing left to do
        }
    }
}
