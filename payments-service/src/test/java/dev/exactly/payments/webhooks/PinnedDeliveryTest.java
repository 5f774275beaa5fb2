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
        db.jdbc.inTransaction(c -> Jdbc.update(c,
                "UPDATE payments_webhook_endpoint SET status = 'disabled' WHERE status = 'enabled'", s -> { }));
        db.jdbc.inTransaction(c -> Jdbc.update(c,
                "UPDATE payments_webhook_delivery SET status = 'canceled' WHERE status = 'pending'", s -> { }));
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

    private static DeliveryWorker worker(boolean allowPrivateNetworks, Destinations.Resolver resolver,
            SSLSocketFactory tls, Duration requestTimeout) {
        return db.worker(false, Duration.ofMillis(50), 20, 2, 2, new RetrySchedule(2, Duration.ofMillis(100),
                Duration.ofMillis(200)), requestTimeout, allowPrivateNetworks, new DeliveryWorker.Network(resolver, tls));
    }

    private static void runUntil(DeliveryWorker worker, BooleanSupplier done) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(() -> {
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
            runUntil(worker(false, names(Map.of("localhost", "192.0.2.1")), SYSTEM_TLS, Duration.ofSeconds(1)),
                    () -> ended(event));

            assertThat(receiver.received()).as("the loopback receiver was never called").isEmpty();
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
            runUntil(worker(true, names(Map.of("hooks.example", "127.0.0.1")), SYSTEM_TLS, Duration.ofSeconds(4)),
                    () -> ended(event));

            assertThat(db.delivery(event).get("status")).isEqualTo("delivered");
            Receiver.Request got = receiver.received().getFirst();
            assertThat(got.host()).isEqualTo("hooks.example:" + receiver.port());
            assertThat(got.target()).isEqualTo("/in/h%C3%A9/hooks?tenant=acme&x=%2F");
            assertThat(got.eventId()).isEqualTo(event);
            assertThat(got.text()).contains("\"subject\":\"ch_pinned\"");
        }
    }

    @Test
    void overTlsTheCertificateMustNameTheUrlsHostNotTheAddress(@TempDir Path dir) throws Exception {
        char[] password = "changeit".toCharArray();
        Path keystore = dir.resolve("hooks.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "hooks", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", "CN=hooks.example", "-ext", "SAN=dns:hooks.example", "-storetype", "PKCS12",
                "-keystore", keystore.toString(), "-storepass", "changeit", "-keypass", "changeit")
                .redirectErrorStream(true).start();
        keytool.getInputStream().transferTo(OutputStream.nullOutputStream());
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(keytool.exitValue()).isZero();
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            store.load(in, password);
        }
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, password);
        SSLContext serverTls = SSLContext.getInstance("TLS");
        serverTls.init(keys.getKeyManagers(), null, null);
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        SSLContext clientTls = SSLContext.getInstance("TLS");
        clientTls.init(null, trust.getTrustManagers(), null);

        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(serverTls));
        AtomicInteger served = new AtomicInteger();
        Map<String, String> hosts = new ConcurrentHashMap<>();
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            served.incrementAndGet();
            hosts.put(exchange.getRequestHeaders().getFirst("Exactly-Event-Id"), exchange.getRequestHeaders().getFirst("Host"));
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        server.setExecutor(executor);
        server.start();
        try {
            int port = server.getAddress().getPort();
            DeliveryWorker worker = worker(true, names(Map.of("hooks.example", "127.0.0.1", "other.example", "127.0.0.1")),
                    clientTls.getSocketFactory(), Duration.ofSeconds(4));

            db.endpoint("https://hooks.example:" + port + "/tls");
            String named = db.record(EventType.CHARGE_SUCCEEDED, "ch_tls_named");
            runUntil(worker, () -> ended(named));
            assertThat(db.delivery(named).get("status")).isEqualTo("delivered");
            assertThat(hosts.get(named)).isEqualTo("hooks.example:" + port);
            nothingLeftDue();

            // the same server, the same address, under a name its certificate does not carry
            db.endpoint("https://other.example:" + port + "/tls");
            String other = db.record(EventType.CHARGE_SUCCEEDED, "ch_tls_other");
            runUntil(worker, () -> ended(other));
            assertThat(db.delivery(other).get("status")).isEqualTo("dead_lettered");
            assertThat(db.delivery(other).get("last_error")).isEqualTo("the TLS handshake failed");
            assertThat(served.get()).as("only the attempt to the certificate's name was served").isEqualTo(1);
        } finally {
            server.stop(0);
            executor.shutdownNow();
        }
    }

    /** A raw server: accepts, reads the request's head, then runs {@code answer} on the connection. */
    private interface Answer {
        void answer(Socket socket) throws IOException, InterruptedException;
    }

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
    void interimAnswersAreSkippedAndTheFinalStatusDecides() throws IOException {
        String event = withRawServer(socket -> {
            OutputStream out = socket.getOutputStream();
            out.write(("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                    + "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }, port -> {
            db.endpoint("http://127.0.0.1:" + port + "/interim");
            String id = db.record(EventType.CHARGE_SUCCEEDED, "ch_interim");
            runUntil(worker(true, Destinations.Resolver.SYSTEM, SYSTEM_TLS, Duration.ofSeconds(4)), () -> ended(id));
            return id;
        });
        assertThat(db.delivery(event).get("status")).isEqualTo("delivered");
        assertThat(db.delivery(event).get("last_status")).isEqualTo(202);
    }

    @Test
    void anAnswerThatIsNotHttpIsAFailedAttempt() throws IOException {
        String event = withRawServer(socket -> {
            socket.getOutputStream().write("SSH-2.0-OpenSSH_9.2\r\n".getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
        }, port -> {
            db.endpoint("http://127.0.0.1:" + port + "/not-http");
            String id = db.record(EventType.CHARGE_SUCCEEDED, "ch_not_http");
            runUntil(worker(true, Destinations.Resolver.SYSTEM, SYSTEM_TLS, Duration.ofSeconds(4)), () -> ended(id));
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
        String event = withRawServer(socket -> {
            OutputStream out = socket.getOutputStream();
            for (int i = 0; i < 600; i++) { // a minute at most
                out.write('H');
                out.flush();
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }, port -> {
            db.endpoint("http://127.0.0.1:" + port + "/trickle");
            String id = db.record(EventType.CHARGE_SUCCEEDED, "ch_trickle");
            DeliveryWorker worker = worker(true, Destinations.Resolver.SYSTEM, SYSTEM_TLS, Duration.ofSeconds(1));
            long start = System.nanoTime();
            worker.runOnce();
            took[0] = System.nanoTime() - start;
            return id;
        });
        Map<String, Object> row = db.delivery(event);
        assertThat(row.get("attempts")).isEqualTo(1);
        assertThat(row.get("last_error")).isEqualTo("no answer within 1 s");
        assertThat(Duration.ofNanos(took[0])).as("the attempt ended at its deadline, not after the trickle")
                .isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void hostsThatDoNotResolveOrResolveToNothingAreRefusedBeforeAnyConnection() {
        Destinations.Resolver nothing = host -> new InetAddress[0];
        assertThat(Destinations.resolve("hooks.example", nothing, true))
                .isEqualTo(new Destinations.Resolution.Refused(Destinations.DOES_NOT_RESOLVE_MARK));
        assertThat(Destinations.resolve("hooks.example", names(Map.of()), true))
                .isEqualTo(new Destinations.Resolution.Refused(Destinations.DOES_NOT_RESOLVE_MARK));
        Destinations.Resolver twoAddresses = host -> new InetAddress[] {
            InetAddress.getByName("8.8.8.8"), InetAddress.getByName("10.0.0.7")};
        assertThat(Destinations.resolve("hooks.example", twoAddresses, false))
                .isEqualTo(new Destinations.Resolution.Refused("10.0.0.7, a private address"));
        assertThat(Destinations.resolve("hooks.example", twoAddresses, true))
                .isInstanceOfSatisfying(Destinations.Resolution.Allowed.class,
                        allowed -> assertThat(allowed.addresses()).hasSize(2));
        assertThat(List.of(Destinations.resolve(null, twoAddresses, true), Destinations.resolve("", twoAddresses, true)))
                .containsOnly(new Destinations.Resolution.Refused(Destinations.DOES_NOT_RESOLVE_MARK));
    }
}
