package dev.exactly.payments.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.exactly.payments.db.Jdbc;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attempt goes to the addresses its host resolved to when it was judged, never to what the name
 * resolves to by the time it connects (DNS rebinding), and over TLS the certificate is checked against the
 * URL's host. The answer's status line is all that is read, within the request timeout as a whole.
 */
class PinnedDeliveryTest {
    private static WebhookDatabase db;
    private static final SSLSocketFactory SYSTEM_TLS = (SSLSocketFactory) SSLSocketFactory.getDefault();

    @BeforeAll
    static void database() {
        db = new WebhookDatabase("webhooks_pinned");
    }

    @AfterAll
    static void closeDatabase() {
        db.close();
    }

    @AfterEach
    void nothingLeftDue() {
        db.jdbc.inTransaction(c -> Jdbc.update(
                c, "UPDATE payments_webhook_endpoint SET status = 'disabled' WHERE status = 'enabled'", s -> {}));
        db.jdbc.inTransaction(c -> Jdbc.update(
                c, "UPDATE payments_webhook_delivery SET status = 'canceled' WHERE status = 'pending'", s -> {}));
    }

    /** A resolver that knows a few names only. */
    private static Destinations.Resolver names(Map<String, String> addresses) {
        return host -> {
            String address = addresses.get(host);
            if (address == null) {
                throw new UnknownHostException(host);
            }
            return new InetAddress[] {InetAddress.getByName(address)};
        };
    }

    private static DeliveryWorker worker(
            boolean allowPrivateNetworks,
            Destinations.Resolver resolver,
            SSLSocketFactory tls,
            Duration requestTimeout) {
        return worker(allowPrivateNetworks, resolver, tls, requestTimeout, null);
    }

    private static DeliveryWorker worker(
            boolean allowPrivateNetworks,
            Destinations.Resolver resolver,
            SSLSocketFactory tls,
            Duration requestTimeout,
            java.net.@org.jspecify.annotations.Nullable ProxySelector proxies) {
        return db.worker(
                false,
                Duration.ofMillis(50),
                20,
                2,
                2,
                new RetrySchedule(2, Duration.ofMillis(100), Duration.ofMillis(200)),
                requestTimeout,
                allowPrivateNetworks,
                new DeliveryWorker.Network(resolver, tls, proxies));
    }

    private static void runUntil(DeliveryWorker worker, BooleanSupplier done) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    worker.runOnce();
                    return done.getAsBoolean();
                });
    }

    private static boolean ended(String event) {
        Object status = db.delivery(event).get("status");
        return "delivered".equals(status) || "dead_lettered".equals(status);
    }

    @Test
    void aNameThatResolvesToAPublicAddressWhenCheckedIsNotCalledAtTheLoopbackAddressItResolvesToLater() {
        // the resolver the check consults answers a public address (TEST-NET-1, where nobody listens); the
        // system's resolver, which an HTTP client resolving the name again would consult, answers loopback,
        // where the receiver listens: a rebinding DNS answering differently from one lookup to the next
        try (Receiver receiver = Receiver.start()) {
            db.endpoint("http://localhost:" + receiver.port() + "/hooks");
            String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_rebound");
            runUntil(
                    worker(false, names(Map.of("localhost", "192.0.2.1")), SYSTEM_TLS, Duration.ofSeconds(1)),
                    () -> ended(event));

            assertThat(receiver.received())
                    .as("the loopback receiver was never called")
                    .isEmpty();
            Map<String, Object> row = db.delivery(event);
            assertThat(row.get("status")).isEqualTo("dead_lettered");
            assertThat(row.get("last_error")).isIn("the connection failed", "the connection timed out");
        }
    }

    @Test
    void anAttemptGoesToTheAddressItsHostResolvedToWithTheUrlsHostAndTarget() {
        try (Receiver receiver = Receiver.start()) {
            db.endpoint("http://hooks.example:" + receiver.port() + "/in/h\u00e9/hooks?tenant=acme&x=%2F");
            String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_pinned");
            runUntil(
                    worker(true, names(Map.of("hooks.example", "127.0.0.1")), SYSTEM_TLS, Duration.ofSeconds(4)),
                    () -> ended(event));

            assertThat(db.delivery(event).get("status")).isEqualTo("delivered");
            Receiver.Request got = receiver.received().getFirst();
            assertThat(got.host()).isEqualTo("hooks.example:" + receiver.port());
            assertThat(got.target()).isEqualTo("/in/h%C3%A9/hooks?tenant=acme&x=%2F");
            assertThat(got.eventId()).isEqualTo(event);
            assertThat(got.text()).contains("\"subject\":\"ch_pinned\"");
        }
    }

    /** A key pair whose certificate names hooks.example only: the server's side, and a client side trusting it. */
    private record Tls(SSLContext server, SSLContext client) {
        static Tls forHooksExample(Path dir) throws Exception {
            char[] password = "changeit".toCharArray();
            Path keystore = dir.resolve("hooks.p12");
            Process keytool = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "keytool")
                                    .toString(),
                            "-genkeypair",
                            "-alias",
                            "hooks",
                            "-keyalg",
                            "EC",
                            "-groupname",
                            "secp256r1",
                            "-validity",
                            "2",
                            "-dname",
                            "CN=hooks.example",
                            "-ext",
                            "SAN=dns:hooks.example",
                            "-storetype",
                            "PKCS12",
                            "-keystore",
                            keystore.toString(),
                            "-storepass",
                            "changeit",
                            "-keypass",
                            "changeit")
                    .redirectErrorStream(true)
                    .start();
            keytool.getInputStream().transferTo(OutputStream.nullOutputStream());
            assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(keytool.exitValue()).isZero();
            KeyStore store = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(keystore)) {
                store.load(in, password);
            }
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, password);
            SSLContext server = SSLContext.getInstance("TLS");
            server.init(keys.getKeyManagers(), null, null);
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext client = SSLContext.getInstance("TLS");
            client.init(null, trust.getTrustManagers(), null);
            return new Tls(server, client);
        }
    }

    /** An https server on loopback answering 204, counting what it served and the Host of each event. */
    private record HttpsReceiver(
            HttpsServer server, ExecutorService executor, AtomicInteger served, Map<String, String> hosts)
            implements AutoCloseable {
        static HttpsReceiver start(SSLContext tls) throws IOException {
            HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.setHttpsConfigurator(new HttpsConfigurator(tls));
            AtomicInteger served = new AtomicInteger();
            Map<String, String> hosts = new ConcurrentHashMap<>();
            server.createContext("/", exchange -> {
                exchange.getRequestBody().readAllBytes();
                served.incrementAndGet();
                hosts.put(
                        exchange.getRequestHeaders().getFirst("Exactly-Event-Id"),
                        exchange.getRequestHeaders().getFirst("Host"));
                exchange.sendResponseHeaders(204, -1);
                exchange.close();
            });
            ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
            server.setExecutor(executor);
            server.start();
            return new HttpsReceiver(server, executor, served, hosts);
        }

        int port() {
            return server.getAddress().getPort();
        }

        @Override
        public void close() {
            server.stop(0);
            executor.shutdownNow();
        }
    }

    @Test
    void overTlsTheCertificateMustNameTheUrlsHostNotTheAddress(@TempDir Path dir) throws Exception {
        Tls tls = Tls.forHooksExample(dir);
        try (HttpsReceiver server = HttpsReceiver.start(tls.server())) {
            int port = server.port();
            DeliveryWorker worker = worker(
                    true,
                    names(Map.of("hooks.example", "127.0.0.1", "other.example", "127.0.0.1")),
                    tls.client().getSocketFactory(),
                    Duration.ofSeconds(4));

            db.endpoint("https://hooks.example:" + port + "/tls");
            String named = db.record(EventType.CHARGE_SUCCEEDED, "ch_tls_named");
            runUntil(worker, () -> ended(named));
            assertThat(db.delivery(named).get("status")).isEqualTo("delivered");
            assertThat(server.hosts().get(named)).isEqualTo("hooks.example:" + port);
            nothingLeftDue();

            // the same server, the same address, under a name its certificate does not carry
            db.endpoint("https://other.example:" + port + "/tls");
            String other = db.record(EventType.CHARGE_SUCCEEDED, "ch_tls_other");
            runUntil(worker, () -> ended(other));
            assertThat(db.delivery(other).get("status")).isEqualTo("dead_lettered");
            assertThat(db.delivery(other).get("last_error")).isEqualTo("the TLS handshake failed");
            assertThat(server.served().get())
                    .as("only the attempt to the certificate's name was served")
                    .isEqualTo(1);
        }
    }

    /**
     * An HTTP proxy on loopback: {@code CONNECT} opens a tunnel to the loopback port asked for (whatever the
     * host), unless {@code refuse} is set; any other request is answered 204 by the proxy itself. Records each
     * request's line and Host.
     */
    private static final class Proxy implements AutoCloseable {
        final List<String> lines = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        private final ServerSocket server;
        private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        private final int refuse;

        // the accept loop and its connections: a failure there shows as the delivery's
        @SuppressWarnings("FutureReturnValueIgnored")
        Proxy(int refuse) throws IOException {
            this.refuse = refuse;
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            executor.submit(() -> {
                while (!server.isClosed()) {
                    Socket client;
                    try {
                        client = server.accept();
                    } catch (IOException closed) {
                        return null;
                    }
                    executor.submit(() -> serve(client));
                }
                return null;
            });
        }

        java.net.ProxySelector selector() {
            return java.net.ProxySelector.of(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()));
        }

        private Void serve(Socket client) throws IOException {
            try (client) {
                InputStream in = client.getInputStream();
                List<String> head = new java.util.ArrayList<>();
                for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
                    head.add(line);
                }
                String host = head.stream()
                        .filter(h -> h.regionMatches(true, 0, "Host:", 0, 5))
                        .map(h -> h.substring(5).strip())
                        .findFirst()
                        .orElse("");
                lines.add(head.getFirst() + " | Host: " + host);
                OutputStream out = client.getOutputStream();
                if (!head.getFirst().startsWith("CONNECT ")) {
                    out.write(
                            "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    return null;
                }
                if (refuse != 0) {
                    out.write(("HTTP/1.1 " + refuse + " Forbidden\r\nContent-Length: 0\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    return null;
                }
                String target = head.getFirst().split(" ", 0)[1];
                int port = Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
                try (Socket upstream = new Socket(InetAddress.getLoopbackAddress(), port)) {
                    out.write("HTTP/1.1 200 Connection Established\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    var up = executor.submit(() -> {
                        upstream.getInputStream().transferTo(out);
                        return null;
                    });
                    try {
                        in.transferTo(upstream.getOutputStream());
                    } catch (IOException closed) {
                        // the client closed the tunnel
                    }
                    up.cancel(true);
                }
            }
            return null;
        }

        private static String readLine(InputStream in) throws IOException {
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                if (b == -1) {
                    throw new IOException("closed");
                }
                if (b != '\r') {
                    line.append((char) b);
                }
            }
            return line.toString();
        }

        @Override
        public void close() throws IOException {
            server.close();
            executor.shutdownNow();
        }
    }

    @Test
    void throughAnHttpProxyAnHttpAttemptNamesTheAbsoluteUrlAndTheHostIsStillJudgedFirst() throws IOException {
        try (Proxy proxy = new Proxy(0)) {
            Destinations.Resolver resolver = names(Map.of("hooks.example", "8.8.8.8", "inside.example", "10.0.0.7"));
            DeliveryWorker worker = worker(false, resolver, SYSTEM_TLS, Duration.ofSeconds(4), proxy.selector());

            db.endpoint("http://hooks.example:8081/in?x=1");
            String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_proxied_http");
            runUntil(worker, () -> ended(event));
            assertThat(db.delivery(event).get("status")).isEqualTo("delivered");
            assertThat(proxy.lines)
                    .containsExactly("POST http://hooks.example:8081/in?x=1 HTTP/1.1 | Host: hooks.example:8081");
            nothingLeftDue();

            // private networks not allowed: a host that resolves inside is refused here, the proxy never asked
            db.endpoint("http://inside.example/in");
            String inside = db.record(EventType.CHARGE_SUCCEEDED, "ch_proxied_inside");
            runUntil(worker, () -> ended(inside));
            assertThat(db.delivery(inside).get("last_error"))
                    .isEqualTo("refused: the URL's host is not a public address");
            assertThat(proxy.lines).hasSize(1);
        }
    }

    @Test
    void throughAnHttpProxyAnHttpsAttemptTunnelsAndTheCertificateStillNamesTheHost(@TempDir Path dir) throws Exception {
        Tls tls = Tls.forHooksExample(dir);
        try (Proxy proxy = new Proxy(0);
                HttpsReceiver server = HttpsReceiver.start(tls.server())) {
            // private networks allowed: the name is the proxy's to resolve (this resolver knows none)
            DeliveryWorker worker = worker(
                    true, names(Map.of()), tls.client().getSocketFactory(), Duration.ofSeconds(4), proxy.selector());
            db.endpoint("https://hooks.example:" + server.port() + "/tunnel");
            String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_tunnel");
            runUntil(worker, () -> ended(event));

            assertThat(db.delivery(event).get("status")).isEqualTo("delivered");
            assertThat(proxy.lines)
                    .containsExactly("CONNECT hooks.example:" + server.port() + " HTTP/1.1 | Host: hooks.example:"
                            + server.port());
            assertThat(server.hosts().get(event)).isEqualTo("hooks.example:" + server.port());
        }
    }

    @Test
    void aTunnelTheProxyRefusesIsAFailedAttempt() throws IOException {
        try (Proxy proxy = new Proxy(403)) {
            DeliveryWorker worker = worker(true, names(Map.of()), SYSTEM_TLS, Duration.ofSeconds(4), proxy.selector());
            db.endpoint("https://hooks.example/refused");
            String event = db.record(EventType.CHARGE_SUCCEEDED, "ch_tunnel_refused");
            runUntil(worker, () -> ended(event));
            Map<String, Object> row = db.delivery(event);
            assertThat(row.get("status")).isEqualTo("dead_lettered");
            assertThat(row.get("last_status")).isNull();
            assertThat(row.get("last_error")).isEqualTo("the connection failed");
            assertThat(proxy.lines).hasSize(2).allMatch(line -> line.startsWith("CONNECT hooks.example:443 HTTP/1.1"));
        }
    }

    /** A raw server: accepts, reads the request's head, then runs {@code answer} on the connection. */
    private interface Answer {
        void answer(Socket socket) throws IOException, InterruptedException;
    }

    // the accept loop and its connections: a failure there shows as the delivery's
    @SuppressWarnings("FutureReturnValueIgnored")
    private static <T> T withRawServer(Answer answer, java.util.function.IntFunction<T> test) throws IOException {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            executor.submit(() -> {
                while (!server.isClosed()) {
                    Socket socket;
                    try {
                        socket = server.accept();
                    } catch (IOException closed) {
                        return null;
                    }
                    executor.submit(() -> {
                        try (socket) {
                            InputStream in = socket.getInputStream();
                            int matched = 0;
                            byte[] end = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
                            while (matched < end.length) {
                                int b = in.read();
                                if (b == -1) {
                                    return null;
                                }
                                matched = b == end[matched] ? matched + 1 : b == end[0] ? 1 : 0;
                            }
                            answer.answer(socket);
                        }
                        return null;
                    });
                }
                return null;
            });
            T result = test.apply(server.getLocalPort());
            server.close();
            executor.shutdownNow();
            return result;
        }
    }

    @Test
    // the bytes on the wire, each CRLF spelled out: a text block would end its lines in LF alone
    @SuppressWarnings("StringConcatToTextBlock")
    void interimAnswersAreSkippedAndTheFinalStatusDecides() throws IOException {
        String event = withRawServer(
                socket -> {
                    OutputStream out = socket.getOutputStream();
                    out.write(("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                                    + "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                },
                port -> {
                    db.endpoint("http://127.0.0.1:" + port + "/interim");
                    String id = db.record(EventType.CHARGE_SUCCEEDED, "ch_interim");
                    runUntil(
                            worker(true, Destinations.Resolver.SYSTEM, SYSTEM_TLS, Duration.ofSeconds(4)),
                            () -> ended(id));
                    return id;
                });
        assertThat(db.delivery(event).get("status")).isEqualTo("delivered");
        assertThat(db.delivery(event).get("last_status")).isEqualTo(202);
    }

    @Test
    void anAnswerThatIsNotHttpIsAFailedAttempt() throws IOException {
        String event = withRawServer(
                socket -> {
                    socket.getOutputStream().write("SSH-2.0-OpenSSH_9.2\r\n".getBytes(StandardCharsets.US_ASCII));
                    socket.getOutputStream().flush();
                },
                port -> {
                    db.endpoint("http://127.0.0.1:" + port + "/not-http");
                    String id = db.record(EventType.CHARGE_SUCCEEDED, "ch_not_http");
                    runUntil(
                            worker(true, Destinations.Resolver.SYSTEM, SYSTEM_TLS, Duration.ofSeconds(4)),
                            () -> ended(id));
                    return id;
                });
        Map<String, Object> row = db.delivery(event);
        assertThat(row.get("status")).isEqualTo("dead_lettered");
        assertThat(row.get("last_status")).isNull();
        assertThat(row.get("last_error")).isEqualTo("the connection failed");
    }

    @Test
    void aStatusLineTrickledByteByByteEndsAtTheRequestTimeoutAsAWhole() throws IOException {
        // one byte every 100 ms: each read returns well within any per-read timeout, the whole never comes
        long[] took = new long[1];
        String event = withRawServer(
                socket -> {
                    OutputStream out = socket.getOutputStream();
                    for (int i = 0; i < 600; i++) { // a minute at most
                        out.write('H');
                        out.flush();
                        TimeUnit.MILLISECONDS.sleep(100);
                    }
                },
                port -> {
                    db.endpoint("http://127.0.0.1:" + port + "/trickle");
                    String id = db.record(EventType.CHARGE_SUCCEEDED, "ch_trickle");
                    DeliveryWorker worker =
                            worker(true, Destinations.Resolver.SYSTEM, SYSTEM_TLS, Duration.ofSeconds(1));
                    long start = System.nanoTime();
                    worker.runOnce();
                    took[0] = System.nanoTime() - start;
                    return id;
                });
        Map<String, Object> row = db.delivery(event);
        assertThat(row.get("attempts")).isEqualTo(1);
        assertThat(row.get("last_error")).isEqualTo("no answer within 1 s");
        assertThat(Duration.ofNanos(took[0]))
                .as("the attempt ended at its deadline, not after the trickle")
                .isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void hostsThatDoNotResolveOrResolveToNothingAreRefusedBeforeAnyConnection() {
        Destinations.Resolver nothing = host -> new InetAddress[0];
        assertThat(Destinations.resolve("hooks.example", nothing, true))
                .isEqualTo(new Destinations.Resolution.Refused(Destinations.DOES_NOT_RESOLVE_MARK));
        assertThat(Destinations.resolve("hooks.example", names(Map.of()), true))
                .isEqualTo(new Destinations.Resolution.Refused(Destinations.DOES_NOT_RESOLVE_MARK));
        Destinations.Resolver twoAddresses =
                host -> new InetAddress[] {InetAddress.getByName("8.8.8.8"), InetAddress.getByName("10.0.0.7")};
        assertThat(Destinations.resolve("hooks.example", twoAddresses, false))
                .isEqualTo(new Destinations.Resolution.Refused("10.0.0.7, a private address"));
        assertThat(Destinations.resolve("hooks.example", twoAddresses, true))
                .isInstanceOfSatisfying(
                        Destinations.Resolution.Allowed.class,
                        allowed -> assertThat(allowed.addresses()).hasSize(2));
        assertThat(List.of(
                        Destinations.resolve(null, twoAddresses, true), Destinations.resolve("", twoAddresses, true)))
                .containsOnly(new Destinations.Resolution.Refused(Destinations.DOES_NOT_RESOLVE_MARK));
    }
}
