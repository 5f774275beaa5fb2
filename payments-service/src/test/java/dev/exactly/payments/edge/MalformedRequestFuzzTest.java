package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.DefaultServiceTest;
import dev.exactly.testing.SystemProperties;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * A seeded corpus of malformed requests — bodies, headers, keys, paths, encodings, content types, methods
 * — sent over a raw socket to the running service, with well-formed charges and their retries mixed in.
 * Whatever arrives: no answer is 5xx, every error is a problem document, the container never shows its
 * own page, and afterwards the service is healthy and the money is right (at most one capture and one
 * journal entry per charge, a replay is the first answer's bytes, the trial balance balances).
 * {@code -Dexactly.fuzz.seed=N} replays a run; {@code -Dexactly.fuzz.requests=N} changes its size.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MalformedRequestFuzzTest extends DefaultServiceTest {
    private static final long SEED = SystemProperties.longInteger("exactly.fuzz.seed", 20261201L);
    private static final int REQUESTS = SystemProperties.integer("exactly.fuzz.requests", 600);
    private static final String[] METHODS = {
        "POST", "POST", "POST", "POST", "GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "FOO", "post"
    };
    private static final String[] PATHS = {
        "/v1/charges",
        "/v1/charges",
        "/v1/refunds",
        "/v1/charges/ch_fuzz",
        "/v1/charges?customer=cus_fuzz&limit=9999",
        "/v1/operator/requests?state=%00",
        "/v1/ledger/entries?account=%ff",
        "/v1/idempotency-keys/%20",
        "/v1/customers/%2e%2e/balance",
        "/v1//charges",
        "/v1/charges;a=b",
        "/V1/CHARGES",
        "/v1/charges/..%2f..%2fetc",
        "/%76%31/charges",
        "/v1/charges%00",
        "/v1/charges/%zz",
        "/error",
        "/actuator/env",
        "/openapi.yaml",
        "/",
        "/demo/settings",
        "/v1/demo/processor",
        "/v1/charges?amount=1&amount=2",
        "*"
    };
    private static final String[] CONTENT_TYPES = {
        "application/json",
        "application/json",
        "application/json; charset=utf-8",
        "application/json; charset=latin1",
        "application/problem+json",
        "text/plain",
        "application/xml",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=--x",
        "multipart/mixed",
        "",
        "///",
        "application/json; boundary=\"",
        "a".repeat(3000),
        null
    };

    private final SplittableRandom random = new SplittableRandom(SEED);
    private final Map<String, byte[]> firstAnswers = new LinkedHashMap<>();

    @Test
    void noMalformedRequestGetsA5xxOrLosesMoney() {
        List<String> violations = new ArrayList<>();
        int wellFormed = 0;
        int created = 0;
        int replays = 0;
        for (int i = 0; i < REQUESTS; i++) {
            boolean valid = random.nextInt(8) == 0;
            Request request = valid ? wellFormedCharge(i) : malformed(i);
            wellFormed += valid ? 1 : 0;
            RawHttp.Response r = RawHttp.send(port, request.head(), request.body());
            String where = "#" + i + " " + request.describe() + " -> " + r;
            if (r.status() >= 500) {
                violations.add("5xx: " + where);
            }
            if (r.status() >= 400 && !request.head().startsWith("HEAD ") && !r.isProblem()) {
                violations.add("not a problem document: " + where);
            }
            if (r.text().contains("Tomcat")
                    || r.text().contains("Exception")
                    || r.text().contains("\tat ")
                    || (r.status() >= 400 && r.text().toLowerCase(Locale.ROOT).contains("<html"))) {
                violations.add("internals disclosed: " + where);
            }
            if (valid && r.status() == 201) {
                created++;
                byte[] first = firstAnswers.putIfAbsent(request.key(), r.body());
                if (first != null) {
                    replays++;
                    if (!java.util.Arrays.equals(first, r.body())) {
                        violations.add("a replay differs from the first answer: " + where);
                    }
                }
            }
        }
        assertThat(violations).as("seed " + SEED).isEmpty();
        assertThat(wellFormed).as("well-formed charges mixed in").isGreaterThan(REQUESTS / 20);
        assertThat(created).as("some of them charged").isPositive();
        assertThat(replays).as("and some were retried").isPositive();

        // the service is healthy, and the money is right
        RawHttp.Response health = RawHttp.get(port, "/actuator/health");
        assertThat(health.status()).as(health.toString()).isEqualTo(200);
        assertThat(health.text()).contains("\"UP\"");
        assertThat(count("SELECT count(*) FROM (SELECT scope_key FROM payments_charge GROUP BY scope_key"
                        + " HAVING count(*) > 1) duplicated"))
                .as("one charge per key")
                .isZero();
        assertThat(psp().captureCounts().values())
                .as("at most one capture per charge")
                .allMatch(n -> n <= 1);
        assertThat(count("SELECT count(*) FROM (SELECT external_ref FROM ledger_entry GROUP BY external_ref"
                        + " HAVING count(*) > 1) duplicated"))
                .as("at most one entry per charge")
                .isZero();
        assertThat(count("SELECT count(*) FROM payments_charge c WHERE c.status = 'succeeded' AND NOT EXISTS"
                        + " (SELECT 1 FROM ledger_entry e WHERE e.external_ref = 'charge:' || c.id)"))
                .as("every succeeded charge is journaled")
                .isZero();
        assertLedgerBalanced();
    }

    /** One request as bytes, with a short description for failure messages. */
    private record Request(String head, byte[] body, String key, String describe) {}

    /** A proper charge; one in three reuses an earlier key with the same body (a retry). */
    private Request wellFormedCharge(int i) {
        int n = random.nextInt(3) == 0 && i > 10 ? random.nextInt(Math.max(1, i / 8)) : i;
        String key = "fuzz-ok-" + n;
        String body = charge(100 + n, "cus_fuzz_" + (n % 7));
        return new Request(
                "POST /v1/charges HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + ACME
                        + "\r\nIdempotency-Key: " + key + "\r\nContent-Type: application/json",
                body.getBytes(StandardCharsets.UTF_8),
                key,
                "well-formed " + key);
    }

    private Request malformed(int i) {
        String method = pick(METHODS);
        String path = random.nextInt(10) == 0 ? garbagePath() : pick(PATHS);
        StringBuilder head = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: localhost");
        switch (random.nextInt(7)) {
            case 0 -> {} // no credentials
            case 1 -> head.append("\r\nAuthorization: Bearer sk_wrong_").append(random.nextInt(1000));
            case 2 ->
                head.append("\r\nAuthorization: Bearer ")
                        .append(ACME)
                        .append("\r\nAuthorization: Bearer ")
                        .append(GLOBEX);
            case 3 ->
                head.append("\r\nAuthorization: ")
                        .append(pick(new String[] {"Basic YTpi", "Bearer", "bearer  " + ACME, "x".repeat(9000)}));
            default -> head.append("\r\nAuthorization: Bearer ").append(random.nextBoolean() ? ACME : GLOBEX);
        }
        String key = "fuzz-" + i;
        switch (random.nextInt(9)) {
            case 0 -> {} // no key
            case 1 -> head.append("\r\nIdempotency-Key: ");
            case 2 -> head.append("\r\nIdempotency-Key: ").append("k".repeat(256));
            case 3 -> head.append("\r\nIdempotency-Key: \"unterminated");
            case 4 -> head.append("\r\nIdempotency-Key: a\u0001b");
            case 5 -> head.append("\r\nIdempotency-Key: caf\u00e9");
            case 6 ->
                head.append("\r\nIdempotency-Key: ")
                        .append(key)
                        .append("\r\nX-Idempotency-Key: other-")
                        .append(key);
            default -> head.append("\r\nIdempotency-Key: ").append(random.nextBoolean() ? key : "\"" + key + "\"");
        }
        String type = pick(CONTENT_TYPES);
        if (type != null) {
            head.append("\r\nContent-Type: ").append(type);
        }
        if (random.nextInt(15) == 0) {
            head.append("\r\n").append(pick(new String[] {
                "X-Bad:\u0000",
                "Bad Header: x",
                "X-Long: " + "v".repeat(12_000),
                "Transfer-Encoding: gzip",
                "Expect: 100-continue",
                ": empty",
                "X-Unicode: \u00ff\u00fe",
                "Content-Encoding: gzip"
            }));
        }
        byte[] body = body();
        return new Request(
                head.toString(),
                body,
                key,
                method + " " + (path.length() > 60 ? path.substring(0, 60) + "..." : path)
                        + " type=" + (type == null ? "none" : type.length() > 40 ? type.substring(0, 40) + "..." : type)
                        + " body=" + body.length + "B");
    }

    private byte[] body() {
        String valid = charge(100 + random.nextInt(1000), "cus_fuzz");
        return switch (random.nextInt(16)) {
            case 0 -> new byte[0];
            case 1 -> valid.substring(0, random.nextInt(valid.length())).getBytes(StandardCharsets.UTF_8);
            case 2 -> (valid + "garbage").getBytes(StandardCharsets.UTF_8);
            case 3 -> ("\uFEFF" + valid).getBytes(StandardCharsets.UTF_8);
            case 4 -> "[".repeat(100 + random.nextInt(20_000)).getBytes(StandardCharsets.UTF_8);
            case 5 -> ("{\"a\":".repeat(65) + "1" + "}".repeat(65)).getBytes(StandardCharsets.UTF_8);
            case 6 ->
                ("{\"amount\":" + "9".repeat(5_000) + ",\"currency\":\"usd\",\"customer\":\"cus_fuzz\"}")
                        .getBytes(StandardCharsets.UTF_8);
            case 7 ->
                "{\"amount\":NaN,\"currency\":\"usd\",\"customer\":\"cus_fuzz\"}".getBytes(StandardCharsets.UTF_8);
            case 8 ->
                "{\"amount\":100,\"amount\":200,\"currency\":\"usd\",\"customer\":\"cus_fuzz\"}"
                        .getBytes(StandardCharsets.UTF_8);
            case 9 -> randomBytes(1 + random.nextInt(2_000));
            case 10 ->
                "{\"amount\":-5,\"currency\":\"xxx\",\"customer\":\"\",\"metadata\":{\"k\":null},\"extra\":true}"
                        .getBytes(StandardCharsets.UTF_8);
            case 11 ->
                ("{\"amount\":1e400,\"currency\":\"USD\",\"customer\":\"" + "c".repeat(10_000) + "\"}")
                        .getBytes(StandardCharsets.UTF_8);
            case 12 -> new byte[(1 << 20) + 1 + random.nextInt(4096)];
            case 13 ->
                "{\"amount\":100,\"currency\":\"usd\",\"customer\":\"cus_\u0000\ud800\"}"
                        .getBytes(StandardCharsets.UTF_16);
            case 14 -> "a=1&b=2&amount=100".getBytes(StandardCharsets.UTF_8);
            default -> valid.getBytes(StandardCharsets.UTF_8);
        };
    }

    private String garbagePath() {
        StringBuilder path = new StringBuilder("/");
        int length = 1 + random.nextInt(random.nextInt(20) == 0 ? 6_000 : 40);
        String alphabet = "abcv1/%.;-_~!$&'()*+,=:@2FfE";
        for (int i = 0; i < length; i++) {
            path.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return path.toString();
    }

    private byte[] randomBytes(int n) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < n; i++) {
            out.write(random.nextInt(256));
        }
        return out.toByteArray();
    }

    private <T> T pick(T[] values) {
        return values[random.nextInt(values.length)];
    }
}
