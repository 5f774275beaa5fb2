package dev.exactly.idempotency.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The {@code Retry-After} header (RFC 9110 §10.2.3): either a number of seconds ({@code 120}) or an
 * HTTP date ({@code Fri, 04 Dec 2026 10:15:00 GMT}, also the obsolete RFC 850 and asctime forms). A date
 * in the past means "now". Anything else is ignored (the computed backoff applies).
 */
public final class RetryAfter {
    /** The longest wait a {@code Retry-After} may ask for that is parsed at all: one day. */
    static final Duration LONGEST = Duration.ofDays(1);

    /** RFC 850: {@code Sunday, 06-Nov-94 08:49:37 GMT}; two-digit years from 1970 on. */
    private static final DateTimeFormatter RFC_850 = new DateTimeFormatterBuilder()
            .appendPattern("EEEE, dd-MMM-")
            .appendValueReduced(ChronoField.YEAR, 2, 2, 1970)
            .appendPattern(" HH:mm:ss zzz")
            .toFormatter(Locale.US);

    private static final DateTimeFormatter ASCTIME =
            DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(java.time.ZoneOffset.UTC);

    private RetryAfter() {}

    /**
     * The wait the header asks for.
     *
     * @param value the header value, or {@code null} when absent
     * @param now   the current time, for an HTTP date
     * @return the wait (zero for a date in the past), or empty when the value is absent or not valid
     */
    public static Optional<Duration> parse(@Nullable String value, Instant now) {
        if (value == null) {
            return Optional.empty();
        }
        String v = value.strip();
        if (v.isEmpty() || v.length() > 64) {
            return Optional.empty();
        }
        if (isDigits(v)) {
            int first = 0;
            while (first < v.length() - 1 && v.charAt(first) == '0') {
                first++; // "0000005" is 5 seconds
            }
            v = v.substring(first);
            if (v.length() > 6) {
                return Optional.of(LONGEST);
            }
            Duration seconds = Duration.ofSeconds(Long.parseLong(v));
            return Optional.of(seconds.compareTo(LONGEST) > 0 ? LONGEST : seconds);
        }
        Instant at = date(v);
        if (at == null) {
            return Optional.empty();
        }
        Duration wait = Duration.between(now, at);
        if (wait.isNegative()) {
            return Optional.of(Duration.ZERO);
        }
        return Optional.of(wait.compareTo(LONGEST) > 0 ? LONGEST : wait);
    }

    private static @Nullable Instant date(String v) {
        for (DateTimeFormatter f : new DateTimeFormatter[] {DateTimeFormatter.RFC_1123_DATE_TIME, RFC_850, ASCTIME}) {
            try {
                return ZonedDateTime.parse(v, f).toInstant();
            } catch (DateTimeParseException e) {
                // try the next form
            }
        }
        return null;
    }

    private static boolean isDigits(String v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }
}
