package dev.exactly.psp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An answer whose HTTP status and body disagree (402 Payment Required carrying a captured charge, 200 OK
 * carrying a declined one; the same for refunds) is not taken at either word: the client reads it as no
 * answer, an unknown outcome, so the caller asks the processor again rather than journal money that did
 * not move or decline a card that was charged. The bodies are the stand-in's own answers, served by a
 * server in front of it with the status swapped.
 */
class ContradictoryAnswerTest {
    private PspSimulator psp;
    private Http http;
    private HttpServer front;
    private PspClient client;
    private final AtomicReference<String> body = new AtomicReference<>();
    private final AtomicReference<Integer> status = new AtomicReference<>();

    @BeforeEach
    void start() throws IOException {
        psp = PspSimulator.start();
        http = new Http(psp.baseUri());
        front = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        front.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(status.get(), bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        front.start();
        client = PspClient.builder(
                        URI.create("http://127.0.0.1:" + front.getAddress().getPort() + "/"))
                .requestTimeout(Duration.ofSeconds(5))
                .build();
    }

    @AfterEach
    void stop() {
        client.close();
        front.stop(0);
        http.close();
        psp.close();
    }

    private void serve(int withStatus, String answer) {
        status.set(withStatus);
        body.set(answer);
    }

    @Test
    void aChargeAnswerWhoseStatusAndBodyDisagreeIsAnUnknownOutcome() {
        var captured = http.charge("k-captured", "{\"amount\":1999,\"currency\":\"usd\",\"source\":\"tok_visa\"}");
        var declined =
                http.charge("k-declined", "{\"amount\":1999,\"currency\":\"usd\",\"source\":\"tok_chargeDeclined\"}");
        assertThat(captured.statusCode()).isEqualTo(200);
        assertThat(declined.statusCode()).isEqualTo(402);
        PspChargeRequest request = PspChargeRequest.of(1999, "usd", "tok_visa");

        serve(402, captured.body());
        assertThatThrownBy(() -> client.charge(request, "k-1"))
                .isInstanceOf(PspServerException.class)
                .satisfies(e -> assertThat(((PspException) e).outcomeUnknown()).isTrue())
                .hasMessageContaining("402")
                .hasMessageContaining("captured");
        serve(200, declined.body());
        assertThatThrownBy(() -> client.charge(request, "k-2"))
                .isInstanceOf(PspServerException.class)
                .hasMessageContaining("200")
                .hasMessageContaining("declined");

        // agreeing answers are read as they are
        serve(200, captured.body());
        assertThat(client.charge(request, "k-3").status()).isEqualTo(ChargeStatus.CAPTURED);
        serve(402, declined.body());
        assertThat(client.charge(request, "k-4").status()).isEqualTo(ChargeStatus.DECLINED);
    }

    @Test
    void aRefundAnswerWhoseStatusAndBodyDisagreeIsAnUnknownOutcome() {
        var charge = http.charge("k-c", "{\"amount\":1999,\"currency\":\"usd\",\"source\":\"tok_visa\"}");
        String chargeId = charge.body().replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
        var succeeded = http.keyed(
                "/v1/refunds", "r-ok", "{\"charge\":\"" + chargeId + "\",\"amount\":500,\"currency\":\"usd\"}");
        var failed = http.keyed(
                "/v1/refunds", "r-no", "{\"charge\":\"" + chargeId + "\",\"amount\":5000,\"currency\":\"usd\"}");
        assertThat(succeeded.statusCode()).as(succeeded.body()).isEqualTo(200);
        assertThat(failed.statusCode()).as(failed.body()).isEqualTo(402);
        PspRefundRequest request = PspRefundRequest.of(chargeId, 500, "usd");

        serve(402, succeeded.body());
        assertThatThrownBy(() -> client.refund(request, "r-1"))
                .isInstanceOf(PspServerException.class)
                .hasMessageContaining("402")
                .hasMessageContaining("succeeded");
        serve(200, failed.body());
        assertThatThrownBy(() -> client.refund(request, "r-2"))
                .isInstanceOf(PspServerException.class)
                .hasMessageContaining("200")
                .hasMessageContaining("failed");
        serve(200, succeeded.body());
        assertThat(client.refund(request, "r-3").succeeded()).isTrue();
    }
}
