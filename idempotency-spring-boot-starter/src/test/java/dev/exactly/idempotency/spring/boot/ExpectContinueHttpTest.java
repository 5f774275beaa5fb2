package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.TestHttp.ACME;
import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.spring.boot.app.TestApplication;
import dev.exactly.testing.ExpectContinue;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * {@code Expect: 100-continue} on a guarded route (RFC 9110 §10.1.1): a request the guard refuses on its headers
 * is answered without having been told to send its body; a request the guard reads is told to continue.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ExpectContinueHttpTest {
    @LocalServerPort
    int port;

    @Test
    void aRequestWithoutAKeyIsRefusedWithoutBeingInvited() throws IOException {
        try (Socket socket =
                ExpectContinue.head(port, "/v1/charges", "Authorization: Bearer " + ACME + "\r\n", 1_000)) {
            String first = ExpectContinue.responseHead(socket.getInputStream());
            assertThat(first).as(first).startsWith("HTTP/1.1 400");
        }
    }

    @Test
    void aRequestWithoutATenantIsRefusedWithoutBeingInvited() throws IOException {
        try (Socket socket = ExpectContinue.head(port, "/v1/charges", "Idempotency-Key: expect-anonymous\r\n", 1_000)) {
            String first = ExpectContinue.responseHead(socket.getInputStream());
            assertThat(first).as(first).startsWith("HTTP/1.1 401");
        }
    }

    @Test
    void aDeclaredBodyOverTheLimitIsRefusedWithoutBeingInvited() throws IOException {
        try (Socket socket = ExpectContinue.head(
                port,
                "/v1/charges",
                "Authorization: Bearer " + ACME + "\r\nIdempotency-Key: expect-big\r\n",
                50_000_000)) {
            String first = ExpectContinue.responseHead(socket.getInputStream());
            assertThat(first).as(first).startsWith("HTTP/1.1 413");
        }
    }

    @Test
    void aRequestTheGuardReadsIsInvitedAndAnswered() throws IOException {
        String ref = TestHttp.ref();
        byte[] body = TestHttp.body(ref).getBytes(StandardCharsets.UTF_8);
        try (Socket socket = ExpectContinue.head(
                port,
                "/v1/charges",
                "Authorization: Bearer " + ACME + "\r\nIdempotency-Key: expect-" + ref + "\r\n",
                body.length)) {
            InputStream in = socket.getInputStream();
            String invitation = ExpectContinue.responseHead(in);
            assertThat(invitation).as(invitation).startsWith("HTTP/1.1 100");
            socket.getOutputStream().write(body);
            socket.getOutputStream().flush();
            String answer = ExpectContinue.responseHead(in);
            assertThat(answer).as(answer).startsWith("HTTP/1.1 201");
        }
    }
}
