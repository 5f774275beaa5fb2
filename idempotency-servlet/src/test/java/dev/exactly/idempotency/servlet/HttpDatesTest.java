package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HttpDatesTest {
    /** The reference: the JDK's formatter of the same pattern. */
    private static final DateTimeFormatter REFERENCE = DateTimeFormatter.ofPattern(
                    "EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
            .withZone(ZoneOffset.UTC);

    @Test
    void formatsTheExampleOfTheRfc() {
        assertThat(HttpDates.format(Instant.parse("1994-11-06T08:49:37Z"))).isEqualTo("Sun, 06 Nov 1994 08:49:37 GMT");
    }

    @Test
    void dropsTheFractionOfTheSecond() {
        assertThat(HttpDates.format(Instant.parse("2026-12-31T23:59:59.999999999Z")))
                .isEqualTo("Thu, 31 Dec 2026 23:59:59 GMT");
    }

    @Test
    void agreesWithTheJdkFormatterOnTheEdgesOfDaysMonthsAndYears() {
        for (String edge : new String[] {
            "1970-01-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2000-02-29T12:00:00Z",
            "2100-02-28T23:59:59Z",
            "2100-03-01T00:00:00Z",
            "2024-02-29T00:00:01Z",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "1900-03-01T00:00:00Z"
        }) {
            Instant instant = Instant.parse(edge);
            assertThat(HttpDates.format(instant)).as(edge).isEqualTo(REFERENCE.format(instant));
            assertThat(HttpDates.parse(HttpDates.format(instant))).isEqualTo(instant);
        }
    }

    @Test
    void agreesWithTheJdkFormatterOnRandomSeconds() {
        SplittableRandom random = new SplittableRandom(20261204);
        long first = Instant.parse("0001-01-01T00:00:00Z").getEpochSecond();
        long end = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
        for (int i = 0; i < 100_000; i++) {
            Instant instant = Instant.ofEpochSecond(random.nextLong(first, end + 1), random.nextInt(1_000_000_000));
            assertThat(HttpDates.format(instant)).isEqualTo(REFERENCE.format(instant));
        }
    }

    @Test
    void leavesYearsBeyondFourDigitsToTheJdkFormatter() {
        Instant beyond = Instant.parse("+10000-01-01T00:00:00Z");
        Instant before = Instant.parse("0000-12-31T23:59:59Z");
        assertThat(HttpDates.format(beyond)).isEqualTo(REFERENCE.format(beyond));
        assertThat(HttpDates.format(before)).isEqualTo(REFERENCE.format(before));
    }

    @Test
    void answersTheSameSecondAgainFromTheLastOne() {
        Instant instant = Instant.parse("2026-12-04T11:45:00.100Z");
        String first = HttpDates.format(instant);
        assertThat(HttpDates.format(instant.plusMillis(800))).isSameAs(first);
        assertThat(HttpDates.format(instant.plusSeconds(1))).isEqualTo("Fri, 04 Dec 2026 11:45:01 GMT");
    }
}
