package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.DefaultServiceTest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * What the servlet container refuses before the application sees the request, and what reaches
 * {@code /error}: every answer a problem document, no server name or version, nothing 5xx.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ContainerErrorTest extends DefaultServiceTest {

    private static final String KEYED = "Authorization: Bearer " + ACME;

    @Test
    void malformedRequestsGetProblemDocumentsWithoutTheServerVersion() {
        List<String> heads = List.of(
                "GET /v1/charges%2Fch_1 HTTP/1.1\r\nHost: x\r\n" + KEYED,
                "GET /v1/charges/%00 HTTP/1.1\r\nHost: x\r\n" + KEYED,
                "GET /v1/charges/%zz HTTP/1.1\r\nHost: x\r\n" + KEYED,
                "GET /v1/charges/% HTTP/1.1\r\nHost: x",
                "GET /v1/charges/\u0001 HTTP/1.1\r\nHost: x",
                "GET /v1/ch arges HTTP/1.1\r\nHost: x",
                "GET v1/charges HTTP/1.1\r\nHost: x",
                "GET /v1/charges HTTP/9.9\r\nHost: x",
                "BREW /v1/charges HTTP/1.1\r\nHost: x\r\n" + KEYED,
                "GET /v1/charges HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0007b\r\n" + KEYED,
                "GET /v1/charges HTTP/1.1\r\nHost: x\r\nBad Header: value",
                "GET /v1/charges HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(20_000),
                "GET /v1/charges HTTP/1.1\r\nHost: x\r\n" + "X-Many: b\r\n".repeat(200) + "X-Last: c",
                "GET /" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: x",
                "GET /v1/charges HTTP/1.1\r\nHost: x\r\nContent-Length: -5",
                "GET * HTTP/1.1\r\nHost: x",
                "OPTIONS * HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip",
                "OPTIONS * HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b",
                "GET /v1/charges HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked");
        List<String> violations = new ArrayList<>();
        for (String head : heads) {
            RawHttp.Response r = RawHttp.send(port, head, new byte[0]);
            String where = head.lines().findFirst().orElse("").replaceAll("[^ -~]", "?");
            where = (where.length() > 80 ? where.substring(0, 80) + "..." : where) + " -> " + r;
            if (r.status() >= 500) {
                violations.add("5xx: " + where);
            }
            if (r.status() < 400) {
                violations.add("accepted: " + where);
            }
            if (!r.isProblem()) {
                violations.add("not a problem document: " + where);
            } else if (!r.header("content-type").equals("application/problem+json")) {
                // the application's problem documents name no charset (JSON is UTF-8 by definition)
                violations.add("content type " + r.header("content-type") + ": " + where);
            }
            if (r.text().contains("Tomcat")
                    || r.text().toLowerCase(java.util.Locale.ROOT).contains("<html")
                    || r.header("server").contains("Tomcat")) {
                violations.add("server disclosed: " + where);
            }
        }
        assertThat(violations).isEmpty();
    }

    @Test
    void aSoundOptionsAsteriskIsStillAnswered() {
        RawHttp.Response r = RawHttp.send(port, "OPTIONS * HTTP/1.1\r\nHost: x", new byte[0]);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("allow")).contains("GET");
    }

    @Test
    void theErrorPathIsNotAnEndpoint() {
        for (String method : List.of("GET", "POST", "DELETE")) {
            RawHttp.Response r = RawHttp.send(
                    port, method + " /error HTTP/1.1\r\nHost: x\r\n" + KEYED, "{}".getBytes(StandardCharsets.UTF_8));
            assertThat(r.status()).as(method + " /error: " + r).isEqualTo(404);
            assertThat(r.isProblem()).isTrue();
        }
        RawHttp.Response anonymous = RawHttp.get(port, "/error");
        assertThat(anonymous.status()).as(anonymous.toString()).isIn(401, 404);
        assertThat(anonymous.isProblem()).isTrue();
    }

    @Test
    void unknownPathsAre401WithoutAKeyAnd404WithOne() {
        RawHttp.Response anonymous = RawHttp.get(port, "/nowhere");
        assertThat(anonymous.status()).isEqualTo(401);
        assertThat(anonymous.header("www-authenticate")).startsWith("Bearer");
        assertThat(anonymous.isProblem()).isTrue();
        RawHttp.Response keyed = RawHttp.get(port, "/nowhere", KEYED);
        assertThat(keyed.status()).isEqualTo(404);
        assertThat(keyed.isProblem()).isTrue();
        RawHttp.Response badKey = RawHttp.get(port, "/v1/charges/ch_1", "Authorization: Bearer sk_wrong");
        assertThat(badKey.status()).isEqualTo(401);
        assertThat(badKey.header("www-authenticate")).contains("invalid_token");
        RawHttp.Response twoKeys = RawHttp.get(port, "/v1/charges/ch_1", KEYED, "Authorization: Bearer " + GLOBEX);
        assertThat(twoKeys.status()).isEqualTo(401);
    }

    @Test
    void jsonEndpointsTakeJsonOnly() {
        String body = charge(100, "cus_media");
        for (String type : List.of(
                "text/plain",
                "application/xml",
                "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=x",
                "application/jsonx")) {
            RawHttp.Response r =
                    RawHttp.post(port, "/v1/charges", body, KEYED, "Idempotency-Key: media-1", "Content-Type: " + type);
            assertThat(r.status()).as(type + ": " + r).isEqualTo(415);
            assertThat(r.isProblem()).isTrue();
            assertThat(r.text()).contains("unsupported-media-type");
        }
        RawHttp.Response none = RawHttp.post(port, "/v1/charges", body, KEYED, "Idempotency-Key: media-1");
        assertThat(none.status()).as(none.toString()).isEqualTo(415);
        // none of these was recorded: the corrected request with the same key runs
        RawHttp.Response ok = RawHttp.post(
                port,
                "/v1/charges",
                body,
                KEYED,
                "Idempotency-Key: media-1",
                "Content-Type: application/json; charset=utf-8");
        assertThat(ok.status()).as(ok.toString()).isEqualTo(201);
    }

    @Test
    void deepJsonIsA400BeforeAnythingRuns() {
        String deep = "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_deep\",\"metadata\":"
                + "[".repeat(20_000) + "]".repeat(20_000) + "}";
        RawHttp.Response r = RawHttp.post(
                port, "/v1/charges", deep, KEYED, "Idempotency-Key: deep-1", "Content-Type: application/json");
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.text()).contains("json_too_deep");
        RawHttp.Response refund = RawHttp.post(
                port, "/v1/refunds", deep, KEYED, "Idempotency-Key: deep-2", "Content-Type: application/json");
        assertThat(refund.status()).as(refund.toString()).isEqualTo(400);
        RawHttp.Response operator = RawHttp.post(
                port,
                "/v1/operator/requests/ch_x/resolve",
                deep,
                "Authorization: Bearer " + OPERATOR,
                "Content-Type: application/json");
        assertThat(operator.status()).as(operator.toString()).isIn(404, 422);
        assertThat(operator.isProblem()).isTrue();
    }

    @Test
    void aMethodTheResourceDoesNotTakeIsA405ThatNamesTheMethodsItTakes() {
        RawHttp.Response delete = RawHttp.send(port, "DELETE /v1/charges HTTP/1.1\r\nHost: x\r\n" + KEYED, new byte[0]);
        assertThat(delete.status()).as(delete.toString()).isEqualTo(405);
        assertThat(delete.isProblem()).isTrue();
        // RFC 9110 section 15.5.6: a 405 carries Allow, so that a client learns what it can send instead
        assertThat(delete.header("allow"))
                .as(delete.headers().toString())
                .contains("GET")
                .contains("POST");
        RawHttp.Response put = RawHttp.send(
                port,
                "PUT /v1/charges/ch_1/capture HTTP/1.1\r\nHost: x\r\n" + KEYED + "\r\nContent-Length: 0",
                new byte[0]);
        assertThat(put.status()).as(put.toString()).isEqualTo(405);
        assertThat(put.header("allow")).as(put.headers().toString()).isEqualTo("POST, OPTIONS");
    }

    @Test
    void aBodyOverTheLimitOfAnEndpointWithoutKeysIsNotCalledAnIdempotentRequest() {
        String big = "{\"url\":\"https://example.com/hook\",\"description\":\"" + "a".repeat(1_100_000) + "\"}";
        RawHttp.Response r = RawHttp.post(port, "/v1/webhook-endpoints", big, KEYED, "Content-Type: application/json");
        assertThat(r.status()).as(r.toString()).isEqualTo(413);
        assertThat(r.text())
                .contains("payload-too-large")
                .contains("\"limit_bytes\":1048576")
                .doesNotContain("idempotent");
    }

    @Test
    void aBodyWithAContentCodingIsA415NamingTheCodingTakenNotInvalidJson() throws Exception {
        String body = charge(100, "cus_coding");
        java.io.ByteArrayOutputStream zipped = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream gzip = new java.util.zip.GZIPOutputStream(zipped)) {
            gzip.write(body.getBytes(StandardCharsets.UTF_8));
        }
        RawHttp.Response gz = RawHttp.send(
                port,
                "POST /v1/charges HTTP/1.1\r\nHost: x\r\n" + KEYED
                        + "\r\nIdempotency-Key: coding-1\r\nContent-Type: application/json\r\nContent-Encoding: gzip",
                zipped.toByteArray());
        assertThat(gz.status()).as(gz.toString()).isEqualTo(415);
        assertThat(gz.text())
                .contains("unsupported-media-type")
                .contains("Content-Encoding: gzip")
                .doesNotContain("invalid_json");
        assertThat(gz.header("accept-encoding")).isEqualTo("identity");
        // a coding named among others, in any case, is refused as well
        RawHttp.Response listed = RawHttp.post(
                port,
                "/v1/webhook-endpoints",
                "{\"url\":\"https://example.com/h\"}",
                KEYED,
                "Content-Type: application/json",
                "Content-Encoding: identity, BR");
        assertThat(listed.status()).as(listed.toString()).isEqualTo(415);
        // not recorded: the same key with the body sent plain (identity named or not) runs once
        RawHttp.Response plain = RawHttp.post(
                port,
                "/v1/charges",
                body,
                KEYED,
                "Idempotency-Key: coding-1",
                "Content-Type: application/json",
                "Content-Encoding: identity");
        assertThat(plain.status()).as(plain.toString()).isEqualTo(201);
        RawHttp.Response again = RawHttp.post(
                port, "/v1/charges", body, KEYED, "Idempotency-Key: coding-1", "Content-Type: application/json");
        assertThat(again.status()).as(again.toString()).isEqualTo(201);
        assertThat(again.header("idempotent-replayed")).isEqualTo("true");
    }
}
