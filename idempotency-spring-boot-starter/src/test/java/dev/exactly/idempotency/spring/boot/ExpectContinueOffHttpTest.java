package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.TestHttp.ACME;
import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.spring.boot.app.TestApplication;
import dev.exactly.testing.ExpectContinue;
import java.io.IOException;
import java.net.Socket;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** With {@code continue-on-read=false} the connector keeps Tomcat's timing: every request is told to continue. */
@SpringBootTest(
        classes = TestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "exactly.idempotency.continue-on-read=false")
class ExpectContinueOffHttpTest {
    @LocalServerPort
    int port;

    @Test
    void aRequestWithoutAKeyIsInvitedFirstAsTomcatDoesByDefault() throws IOException {
        try (Socket socket =
                ExpectContinue.head(port, "/v1/charges", "Authorization: Bearer " + ACME + "\r\n", 1_000)) {
            String first = ExpectContinue.responseHead(socket.getInputStream());
            assertThat(first).as(first).startsWith("HTTP/1.1 100");
        }
    }
}
