package dev.exactly.payments.webhooks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/** The README's receiver: a signed delivery is handled once, a redelivery is acknowledged, a forgery or a replay refused. */
class ReadmeReceiverTest {
    private static final String SECRET = "whsec_readme";
    private static final byte[] BODY =
            "{\"id\":\"evt_1\",\"type\":\"charge.succeeded\"}".getBytes(StandardCharsets.UTF_8);

    private static int deliver(ReadmeReceiver receiver, String signature, byte[] body) throws Exception {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/hooks");
        request.setContent(body);
        request.addHeader("Exactly-Signature", signature);
        request.addHeader("Exactly-Event-Id", "evt_1");
        MockHttpServletResponse response = new MockHttpServletResponse();
        receiver.service(request, response);
        return response.getStatus();
    }

    @Test
    void aSignedDeliveryIsHandledOnceAndForgeriesAndReplaysAreRefused() throws Exception {
        ReadmeReceiver receiver = new ReadmeReceiver(SECRET);
        String signed = WebhookSignature.header(SECRET, Instant.now(), BODY);

        assertThat(deliver(receiver, WebhookSignature.header("whsec_other", Instant.now(), BODY), BODY))
                .isEqualTo(400);
        byte[] altered = new String(BODY, StandardCharsets.UTF_8)
                .replace("succeeded", "failed")
                .getBytes(StandardCharsets.UTF_8);
        assertThat(deliver(receiver, signed, altered)).isEqualTo(400);
        assertThat(deliver(
                        receiver,
                        WebhookSignature.header(SECRET, Instant.now().minus(Duration.ofMinutes(10)), BODY),
                        BODY))
                .as("a delivery captured ten minutes ago and replayed")
                .isEqualTo(400);
        assertThat(receiver.handled).isEmpty();

        assertThat(deliver(receiver, signed, BODY)).isEqualTo(204);
        assertThat(deliver(receiver, signed, BODY)).as("the redelivery").isEqualTo(200);
        assertThat(receiver.handled).containsExactly("evt_1");
    }
}
