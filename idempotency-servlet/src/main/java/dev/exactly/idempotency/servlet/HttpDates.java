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

    private HttpDates() {}

    static String format(Instant instant) {
        return IMF_FIXDATE.format(instant.truncatedTo(ChronoUnit.SECONDS));
    }

    static Instant parse(String text) {
        return IMF_FIXDATE.parse(text, Instant::from);
    }
}
