package dev.exactly.payments.webhooks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WebhookIdsTest {

    @Test
    void idsAndSecretsHaveTheirPrefixAndLength() {
        assertThat(WebhookIds.event()).matches("evt_[0-9A-Za-z]{24}");
        assertThat(WebhookIds.endpoint()).matches("we_[0-9A-Za-z]{24}");
        assertThat(WebhookIds.secret()).matches("whsec_[0-9A-Za-z]{32}");
        assertThat(WebhookIds.claim()).matches("[0-9A-Za-z]{24}");
        Set<String> secrets = new HashSet<>();
        Set<Character> characters = new HashSet<>();
        for (int i = 0; i < 2_000; i++) {
            String secret = WebhookIds.secret();
            secrets.add(secret);
            for (char c : secret.substring(6).toCharArray()) {
                characters.add(c);
            }
        }
        assertThat(secrets).hasSize(2_000);
        assertThat(characters).hasSize(62);
    }
}
