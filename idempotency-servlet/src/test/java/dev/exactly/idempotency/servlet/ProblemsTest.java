package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyException;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyKeyReusedException;
import dev.exactly.idempotency.InvalidIdempotencyKeyException;
import dev.exactly.idempotency.LeaseLostException;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.PayloadTooLargeException;
import dev.exactly.idempotency.RequestInFlightException;
import dev.exactly.idempotency.StoreUnavailableException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProblemsTest {

    @Test
    void everyEngineExceptionMapsToItsTypeStatusAndCode() {
        Fingerprint fp = new Fingerprint("sha256-jcs", "ab");
        Map<IdempotencyException, String> expected = Map.of(
                catchInvalid(null),
                "idempotency-key-missing 400 idempotency_key_missing",
                catchInvalid("k".repeat(300)),
                "idempotency-key-invalid 400 idempotency_key_invalid",
                new PayloadTooLargeException(10),
                "payload-too-large 413 payload_too_large",
                new IdempotencyKeyReusedException(fp, fp),
                "idempotency-key-reused 422 idempotency_key_reused",
                new RequestInFlightException(Duration.ofSeconds(1), false),
                "idempotency-key-in-use 409 idempotency_key_in_use",
                new StoreUnavailableException("down", null),
                "idempotency-store-unavailable 503 idempotency_store_unavailable",
                new LeaseLostException(OwnerToken.random()),
                "idempotency-lease-lost 409 idempotency_lease_lost");
        expected.forEach((exception, description) -> {
            Problem problem = Problems.from(exception);
            assertThat(problem.type() + " " + problem.status() + " " + problem.code())
                    .isEqualTo(Problems.BASE + description);
            assertThat(problem.code()).isEqualTo(exception.code());
            assertThat(problem.title()).isNotBlank();
            assertThat(problem.detail()).isNotBlank();
        });
    }

    private static InvalidIdempotencyKeyException catchInvalid(String header) {
        try {
            IdempotencyKey.parse(header);
        } catch (InvalidIdempotencyKeyException e) {
            return e;
        }
        throw new AssertionError("expected an invalid key: " + header);
    }

    @Test
    void typesAreStableUrisUnderTheDocumentedBase() {
        assertThat(Problems.BASE).isEqualTo(URI.create("https://exactly.dev/problems/"));
        assertThat(List.of(
                        Problems.IDEMPOTENCY_KEY_MISSING,
                        Problems.IDEMPOTENCY_KEY_INVALID,
                        Problems.TENANT_UNRESOLVED,
                        Problems.IDEMPOTENCY_KEY_IN_USE,
                        Problems.IDEMPOTENCY_LEASE_LOST,
                        Problems.PAYLOAD_TOO_LARGE,
                        Problems.IDEMPOTENCY_KEY_REUSED,
                        Problems.VALIDATION_FAILED,
                        Problems.IDEMPOTENCY_STORE_UNAVAILABLE,
                        Problems.RESPONSE_NOT_STORED))
                .extracting(URI::toString)
                .containsExactly(
                        "https://exactly.dev/problems/idempotency-key-missing",
                        "https://exactly.dev/problems/idempotency-key-invalid",
                        "https://exactly.dev/problems/tenant-unresolved",
                        "https://exactly.dev/problems/idempotency-key-in-use",
                        "https://exactly.dev/problems/idempotency-lease-lost",
                        "https://exactly.dev/problems/payload-too-large",
                        "https://exactly.dev/problems/idempotency-key-reused",
                        "https://exactly.dev/problems/validation-failed",
                        "https://exactly.dev/problems/idempotency-store-unavailable",
                        "https://exactly.dev/problems/response-not-stored");
        assertThat(Problems.tenantUnresolved().status()).isEqualTo(401);
        assertThat(Problems.validationFailed("x").status()).isEqualTo(422);
        assertThat(Problems.validationFailed("x").code()).isEqualTo("validation_failed");
    }

    @Test
    void jsonEscapesEveryStringAndStaysAscii() {
        String hostile =
                "quote\" backslash\\ newline\n tab\t nul\u0000 bell\u0007 del\u007f é 世 \uD83D\uDE00 lone\uD800 ls\u2028 </script>";
        Problem problem = Problems.validationFailed(hostile)
                .with("errors", List.of(Map.of("field", "a\"b", "message", hostile)))
                .with("count", 2)
                .with("ok", false)
                .with("nothing", null);

        byte[] json = problem.toJson();
        String text = new String(json, StandardCharsets.US_ASCII);

        for (byte b : json) {
            assertThat(b).isBetween((byte) 0x20, (byte) 0x7e);
        }
        assertThat(text)
                .startsWith(
                        "{\"type\":\"https://exactly.dev/problems/validation-failed\",\"title\":\"Validation failed\","
                                + "\"status\":422,\"detail\":\"quote\\\" backslash\\\\ newline\\n tab\\t nul\\u0000 bell\\u0007 del\\u007f "
                                + "\\u00e9 \\u4e16 \\ud83d\\ude00 lone\\ud800 ls\\u2028 </script>\",\"code\":\"validation_failed\"");
        assertThat(text).contains(",\"count\":2,\"ok\":false,\"nothing\":null}");
        assertThat(Json.topLevelString(json, "detail")).isEqualTo(hostile);
        assertThat(Json.topLevelString(json, "type")).isEqualTo(Problems.VALIDATION_FAILED.toString());
    }

    @Test
    void extensionsCannotShadowStandardMembersOrHoldArbitraryObjects() {
        Problem problem = Problems.keyReused();
        assertThatThrownBy(() -> problem.with("type", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> problem.with("code", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> problem.with("when", new Object())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> problem.with("nan", Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theTypeSnifferReadsOnlyTopLevelStringMembers() {
        assertThat(Json.topLevelString(
                        bytes("{\"a\":{\"type\":\"nested\"},\"b\":[1,\"]\",{}],\"type\":\"top\"}"), "type"))
                .isEqualTo("top");
        assertThat(Json.topLevelString(bytes(" {\"type\" : \"\\u0041\\\"b\"} "), "type"))
                .isEqualTo("A\"b");
        assertThat(Json.topLevelString(bytes("{\"type\":42}"), "type")).isNull();
        assertThat(Json.topLevelString(bytes("{\"other\":true}"), "type")).isNull();
        assertThat(Json.topLevelString(bytes("[\"type\"]"), "type")).isNull();
        assertThat(Json.topLevelString(bytes("{\"type\":\"unterminated"), "type"))
                .isNull();
        assertThat(Json.topLevelString(bytes("{\"x\":\"\\uZZZZ\",\"type\":\"t\"}"), "type"))
                .isNull();
        assertThat(Json.topLevelString(bytes(""), "type")).isNull();
    }

    @Test
    void sendErrorProblemsAreAboutBlankWithTheReasonPhrase() {
        Problem problem = Problems.forStatus(404, null);
        assertThat(problem.type()).isEqualTo(Problems.ABOUT_BLANK);
        assertThat(problem.title()).isEqualTo("Not Found");
        assertThat(new String(problem.toJson(), StandardCharsets.UTF_8))
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404}");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
