package dev.exactly.idempotency.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RetryAfterTest {
    private static final Instant NOW = Instant.parse("1994-11-06T08:49:30Z");

    @Test
    void secondsAndTheThreeHttpDateForms() {
        assertThat(RetryAfter.parse("120", NOW)).contains(Duration.ofMinutes(2));
        assertThat(RetryAfter.parse(" 0 ", NOW)).contains(Duration.ZERO);
        assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", NOW)).contains(Duration.ofSeconds(7));
        assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", NOW)).contains(Duration.ofSeconds(7));
        assertThat(RetryAfter.parse("Sun Nov  6 08:49:37 1994", NOW)).contains(Duration.ofSeconds(7));
    }

    @Test
    void aDateInThePastMeansNowAndHugeValuesAreBounded() {
        assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", NOW)).contains(Duration.ZERO);
        assertThat(RetryAfter.parse("99999999999", NOW)).contains(Duration.ofDays(1));
        assertThat(RetryAfter.parse("Fri, 31 Dec 9999 23:59:59 GMT", NOW)).contains(Duration.ofDays(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "-1", "1.5", "soon", "1e3", "Sun, 06 Nov 1994 25:49:37 GMT", "+5", "0x10"})
    void invalidValuesAreIgnored(String value) {
        assertThat(RetryAfter.parse(value, NOW)).isEmpty();
    }

    @Test
    void absentIsEmpty() {
        assertThat(RetryAfter.parse(null, NOW)).isEmpty();
    }

    @Test
    void leadingZerosAreNotMoreSeconds() {
        assertThat(RetryAfter.parse("0000005", Instant.EPOCH)).contains(Duration.ofSeconds(5));
        assertThat(RetryAfter.parse("0", Instant.EPOCH)).contains(Duration.ZERO);
    }
}
