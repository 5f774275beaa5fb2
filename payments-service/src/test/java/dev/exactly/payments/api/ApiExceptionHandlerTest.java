package dev.exactly.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.db.DatabaseException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * What a failure's answer tells the client to do next depends on whether the request carried an
 * Idempotency-Key: with one, retrying with it fetches the outcome; without one (a route that takes none,
 * such as creating a webhook endpoint), "retry with the same Idempotency-Key" was advice the client could
 * not follow, and sending the request again could do it twice.
 */
class ApiExceptionHandlerTest {
    private final ApiExceptionHandler handler = new ApiExceptionHandler();

    private static MockHttpServletRequest post(String path, String key) {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", path);
        if (key != null) {
            request.addHeader("Idempotency-Key", key);
        }
        return request;
    }

    private static String text(ResponseEntity<byte[]> answer) {
        return new String(answer.getBody(), StandardCharsets.UTF_8);
    }

    private static DatabaseException midWrite() {
        return new DatabaseException(new SQLException("connection lost during COMMIT", "08006"));
    }

    @Test
    void aDatabaseFailureMidWriteTellsAKeyedRequestToRetryWithItsKey() {
        ResponseEntity<byte[]> answer = handler.database(midWrite(), post("/v1/charges", "k-1"));
        assertThat(answer.getStatusCode().value()).isEqualTo(503);
        assertThat(text(answer)).contains("outcome-unknown").contains("retry with the same Idempotency-Key");
    }

    @Test
    void aKeyInTheAliasHeaderCountsAsAKey() {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/charges");
        request.addHeader("X-Idempotency-Key", "k-alias");
        ResponseEntity<byte[]> answer = handler.database(midWrite(), request);
        assertThat(text(answer)).contains("retry with the same Idempotency-Key");
    }

    @Test
    void aDatabaseFailureMidWriteTellsAKeylessRequestToLookBeforeSendingItAgain() {
        ResponseEntity<byte[]> answer = handler.database(midWrite(), post("/v1/webhook-endpoints", null));
        assertThat(answer.getStatusCode().value()).isEqualTo(503);
        assertThat(answer.getHeaders().getFirst("Retry-After")).isNotNull();
        assertThat(text(answer))
                .contains("outcome-unknown")
                .contains("carried no Idempotency-Key")
                .contains("check whether it did")
                .doesNotContain("retry with the same");
    }

    @Test
    void aBugTellsAKeylessRequestToLookBeforeSendingItAgain() throws Exception {
        ResponseEntity<byte[]> keyless = handler.unexpected(
                new IllegalStateException("bug"), post("/v1/webhook-endpoints", null), new MockHttpServletResponse());
        assertThat(keyless.getStatusCode().value()).isEqualTo(500);
        assertThat(text(keyless))
                .contains("internal-error")
                .contains("carried no Idempotency-Key")
                .doesNotContain("retry with the same");
        ResponseEntity<byte[]> keyed = handler.unexpected(
                new IllegalStateException("bug"), post("/v1/refunds", "k-2"), new MockHttpServletResponse());
        assertThat(text(keyed)).contains("retry with the same Idempotency-Key");
    }
}
