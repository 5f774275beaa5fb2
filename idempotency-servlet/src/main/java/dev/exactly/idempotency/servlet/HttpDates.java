package dev.exactly.idempotency.servlet;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/** HTTP dates in the IMF-fixdate form of RFC 9110 §5.6.7, e.g. {@code Sun, 06 Nov 1994 08:49:37 GMT}. */
final class HttpDates {
    private static final DateTimeFormatter IMF_FIXDATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

    /** The last second formatted: most answers within one second carry the same date. */
    private static volatile Formatted last = new Formatted(Long.MIN_VALUE, "");

    private HttpDates() {}

    static String format(Instant instant) {
        long second = instant.getEpochSecond();
        Formatted cached = last;
        if (cached.second() == second) {
            return cached.text();
        }
        String text = IMF_FIXDATE.format(instant.truncatedTo(ChronoUnit.SECONDS));
        last = new Formatted(second, text);
        return text;
    }

    private record Formatted(long second, String text) {}

    static Instant parse(String text) {
        return IMF_FIXDATE.parse(text, Instant::from);
    }
}
