package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.DefaultServiceTest;
import dev.exactly.testing.ExpectContinue;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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

    /** Sends the head of a request to {@code /v1/charges} that expects 100-continue. */
    private Socket head(String headers, long contentLength) throws IOException {
        return ExpectContinue.head(port, "/v1/charges", headers, contentLength);
    }

    private static String responseHead(InputStream in) throws IOException {
        return ExpectContinue.responseHead(in);
    }

    @Test
    void aBodyOverTheLimitIsRefusedWithoutBeingInvited() throws IOException {
        try (Socket socket =
                head("Authorization: Bearer " + ACME + "\r\nIdempotency-Key: expect-big\r\n", 50_000_000)) {
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
        try (Socket socket = head(
                "Authorization: Bearer " + ACME + "\r\nIdempotency-Key: expect-fine\r\n" + "Connection: close\r\n",
                BODY.length())) {
            InputStream in = socket.getInputStream();
            String invitation = responseHead(in);
            assertThat(invitation).as(invitation).startsWith("HTTP/1.1 100");
            OutputStream out = socket.getOutputStream();
            out.write(BODY.getBytes(StandardCharsets.UTF_8));
            out.flush();
            String answer = responseHead(in);
            assertThat(answer).as(answer).startsWith("HTTP/1.1 201");
        }
        assertThat(count("SELECT count(*) FROM payments_charge WHERE customer = 'cus_expect'"))
                .isEqualTo(before + 1);
    }
}
