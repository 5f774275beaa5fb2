package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.DefaultServiceTest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * {@code Expect: 100-continue} (RFC 9110 section 10.1.1): the client sends its body only once told to. A
 * request the service refuses on its headers is answered without that invitation; before, Tomcat sent
 * {@code 100 Continue} as soon as it had parsed the headers, so a client was asked for a 50 MB body that the
 * 413 after it refused unread, and an unauthenticated one for a body nobody would read.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ExpectContinueTest extends DefaultServiceTest {

    private static final String BODY = "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_expect\"}";

    /** Sends the head of a request that expects 100-continue; returns the socket to go on with. */
    private Socket head(String headers, long contentLength) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        socket.setSoTimeout(20_000);
        String head = "POST /v1/charges HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Expect: 100-continue\r\nContent-Length: " + contentLength + "\r\n" + headers + "\r\n";
        socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
        socket.getOutputStream().flush();
        return socket;
    }

    /** Reads one response head (through its blank line) and returns it. */
    private static String responseHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    @Test
    void aBodyOverTheLimitIsRefusedWithoutBeingInvited() throws IOException {
        try (Socket socket = head("Authorization: Bearer " + ACME + "\r\nIdempotency-Key: expect-big\r\n", 50_000_000)) {
            String first = responseHead(socket.getInputStream());
            assertThat(first).as(first).startsWith("HTTP/1.1 413");
        }
    }

    @Test
    void anUnauthenticatedRequestIsRefusedWithoutBeingInvited() throws IOException {
        try (Socket socket = head("Idempotency-Key: expect-anonymous\r\n", BODY.length())) {
            String first = responseHead(socket.getInputStream());
            assertThat(first).as(first).startsWith("HTTP/1.1 401");
        }
    }

    @Test
    void aRequestThatIsReadIsInvitedAndAnswered() throws IOException {
        long before = count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_expect'");
        try (Socket socket = head("Authorization: Bearer " + ACME + "\r\nIdempotency-Key: expect-fine\r\n"
                + "Connection: close\r\n", BODY.length())) {
            InputStream in = socket.getInputStream();
            String invitation = responseHead(in);
            assertThat(invitation).as(invitation).startsWith("HTTP/1.1 100");
            OutputStream out = socket.getOutputStream();
            out.write(BODY.getBytes(StandardCharsets.UTF_8));
            out.flush();
            String answer = responseHead(in);
            assertThat(answer).as(answer).startsWith("HTTP/1.1 201");
        }
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_expect'")).isEqualTo(before + 1);
    }
}
