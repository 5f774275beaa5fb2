package dev.exactly.payments.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.payments.db.Pipeline;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OutboxTest {

    @Test
    void theEventDocumentCarriesThePayloadAsItsBytesAre() {
        try (WebhookDatabase db = new WebhookDatabase("outbox")) {
            String payload =
                    "{\"id\":\"ch_1\",\"object\":\"charge\",\"amount\":1999,\"description\":\"caf\u00e9 \\\"x\\\" \\u2028\","
                            + "\"metadata\":{\"b\":\"1\",\"a\":[1,2.50,null,true]}}";
            String id = db.jdbc.inTransaction(c -> new Outbox(InstantSource.fixed(Instant.ofEpochSecond(1_796_180_606)))
                    .record(c, WebhookDatabase.TENANT, EventType.CHARGE_SUCCEEDED, "ch_1", payload));
            String body = db.jdbc
                    .queryOne(
                            "SELECT body FROM payments_event WHERE id = ?",
                            s -> s.setString(1, id),
                            rs -> rs.getString(1))
                    .orElseThrow();
            assertThat(body)
                    .isEqualTo("{\"id\":\"" + id + "\",\"object\":\"event\",\"type\":\"charge.succeeded\","
                            + "\"created\":1796180606,\"subject\":\"ch_1\",\"data\":{\"object\":" + payload + "}}");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "[1]", "\"text\"", "{\"a\":1} {}", "{\"a\":1", "{\"a\":1,\"a\":2}", "not json", "null"})
    void aPayloadThatIsNotOneJsonObjectIsRefused(String payload) {
        Outbox outbox = new Outbox(InstantSource.system());
        assertThatThrownBy(() -> outbox.record(
                        new Pipeline(),
                        "acme",
                        EventType.CHARGE_SUCCEEDED,
                        "ch_1",
                        payload.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
