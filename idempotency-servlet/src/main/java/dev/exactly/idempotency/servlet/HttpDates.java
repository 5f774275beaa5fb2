package dev.exactly.idempotency.servlet;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/** HTTP dates in the IMF-fixdate form of RFC 9110 §5.6.7, e.g. {@code Sun, 06 Nov 1994 08:49:37 GMT}. */
final class HttpDates {
    private static final DateTimeFormatter IMF_FIXDATE = DateTimeFormatter.ofPattern(
                    "EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
            .withZone(ZoneOffset.UTC);
    private static final String[] DAYS = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    private static final String[] MONTHS = {
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
    };
    private static final long SECONDS_PER_DAY = 86_400;
    /** The length of an IMF-fixdate. */
    private static final int LENGTH = 29;

    /** The last second formatted: most answers within one second carry the same date. */
    private static volatile Formatted last = new Formatted(Long.MIN_VALUE, "");

    private HttpDates() {}

    /**
     * The instant's second as an IMF-fixdate. Written field by field rather than through {@link DateTimeFormatter}:
     * a replay's date is its record's expiry, a different second for nearly every record, and the formatter's
     * general machinery cost a replay more than its header is worth. Years outside 1..9999, which a four-digit
     * field cannot hold, are left to the formatter.
     */
    static String format(Instant instant) {
        long second = instant.getEpochSecond();
        Formatted cached = last;
        if (cached.second() == second) {
            return cached.text();
        }
        LocalDate date = LocalDate.ofEpochDay(Math.floorDiv(second, SECONDS_PER_DAY));
        int year = date.getYear();
        String text = year < 1 || year > 9999
                ? IMF_FIXDATE.format(instant.truncatedTo(ChronoUnit.SECONDS))
                : imfFixdate(date, (int) Math.floorMod(second, SECONDS_PER_DAY));
        last = new Formatted(second, text);
        return text;
    }

    private static String imfFixdate(LocalDate date, int secondOfDay) {
        byte[] out = new byte[LENGTH];
        ascii(out, 0, DAYS[date.getDayOfWeek().getValue() - 1]);
        out[3] = ',';
        out[4] = ' ';
        digits(out, 5, date.getDayOfMonth(), 2);
        out[7] = ' ';
        ascii(out, 8, MONTHS[date.getMonthValue() - 1]);
        out[11] = ' ';
        digits(out, 12, date.getYear(), 4);
        out[16] = ' ';
        digits(out, 17, secondOfDay / 3600, 2);
        out[19] = ':';
        digits(out, 20, secondOfDay / 60 % 60, 2);
        out[22] = ':';
        digits(out, 23, secondOfDay % 60, 2);
        ascii(out, 25, " GMT");
        return new String(out, StandardCharsets.US_ASCII);
    }

    private static void ascii(byte[] out, int at, String text) {
        for (int i = 0; i < text.length(); i++) {
            out[at + i] = (byte) text.charAt(i);
        }
    }

    /** {@code value} in {@code width} decimal digits, zero-padded. */
    private static void digits(byte[] out, int at, int value, int width) {
        for (int i = at + width - 1; i >= at; i--) {
            out[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
    }

    private record Formatted(long second, String text) {}

    static Instant parse(String text) {
        return IMF_FIXDATE.parse(text, Instant::from);
    }
}
