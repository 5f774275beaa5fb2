package dev.exactly.examples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The example, as the README adds Exactly to it (BOM, starter, WebFlux filter, {@code @Idempotent}), answers
 * over real HTTP on Netty: a charge once, its retry replayed, the key reused with another amount refused,
 * a refund on its own route; and each execution shows as the {@code exactly.idempotency} timer.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ChargesTest {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    ChargeController charges;

    private HttpResponse<String> send(String method, String path, String key, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer sk_test_4f9a2c")
                .header("Content-Type", "application/json")
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aChargeRunsOnceAndItsRetryIsReplayed() throws Exception {
        HttpResponse<String> charge =
                send("POST", "/v1/charges", "order-1042", "{\"amount\":1000,\"currency\":\"EUR\"}");
        HttpResponse<String> retry =
                send("POST", "/v1/charges", "order-1042", "{\"amount\":1000,\"currency\":\"EUR\"}");
        HttpResponse<String> reused =
                send("POST", "/v1/charges", "order-1042", "{\"amount\":2000,\"currency\":\"EUR\"}");
        HttpResponse<String> refund = send("POST", "/v1/charges/ch_1/refunds", "refund-7", "{\"amount\":250}");

        assertThat(charge.statusCode()).isEqualTo(201);
        assertThat(charge.body()).contains("\"id\":\"ch_1\"");
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(charge.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(reused.body()).contains("idempotency_key_reused");
        assertThat(refund.statusCode()).isEqualTo(201);
        assertThat(send("POST", "/v1/charges", null, "{\"amount\":1,\"currency\":\"EUR\"}")
                        .statusCode())
                .isEqualTo(400);
        assertThat(charges.chargesMade()).isEqualTo(1);

        HttpResponse<String> timer =
                send("GET", "/actuator/metrics/exactly.idempotency?tag=outcome:replayed", null, null);
        assertThat(timer.statusCode()).isEqualTo(200);
        assertThat(timer.body()).contains("\"COUNT\"").contains("/v1/charges");
    }
}
