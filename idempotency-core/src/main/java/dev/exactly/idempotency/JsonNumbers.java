package dev.exactly.idempotency;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Number literals in RFC 8785's canonical form: read as an IEEE double, written as ECMAScript's
 * {@code Number.prototype.toString} writes that double (the shortest digits that read back as the same
 * double, the closest such digits to it, plain notation from 10^-6 to 10^21 and exponent notation
 * outside it, {@code -0} as {@code 0}).
 *
 * <p>A literal whose value a double does not hold is not canonicalised: RFC 8785 would make
 * {@code 9007199254740993} and {@code 9007199254740992} one number, so such a document is fingerprinted by
 * its bytes instead ({@link #roundTrips}).
 */
final class JsonNumbers {
    /** Longest number literal whose exactness is checked; longer ones are fingerprinted by bytes. */
    static final int MAX_CHECKED_CHARS = 64;

    private static final BigDecimal MAX_EXACT_INTEGER = BigDecimal.valueOf(1L << 53);
    private static final MathContext ONE_DIGIT = new MathContext(1, RoundingMode.HALF_EVEN);

    private JsonNumbers() {}

    /**
     * Whether a JSON number literal reads as a double that stands for the same number: an integer up to 2^53 in
     * magnitude, a decimal of at most 15 significant digits in the range of normal doubles (every such decimal
     * reads back from the double's shortest digits), or a decimal whose value is exactly a double's. Literals
     * longer than {@link #MAX_CHECKED_CHARS} are not parsed and answer false, and so do {@code 1e-400} (which
     * reads as 0) and {@code 1e22} (an integer beyond 2^53, though a double holds it).
     */
    static boolean roundTrips(String literal) {
        if (literal.length() > MAX_CHECKED_CHARS) {
            return false;
        }
        BigDecimal decimal;
        try {
            decimal = new BigDecimal(literal);
        } catch (NumberFormatException notANumber) {
            return false;
        }
        BigDecimal stripped = decimal.stripTrailingZeros();
        if (stripped.scale() <= 0) {
            return stripped.abs().compareTo(MAX_EXACT_INTEGER) <= 0;
        }
        double d = decimal.doubleValue();
        if (stripped.precision() <= 15 && Math.abs(d) >= Double.MIN_NORMAL) {
            return true;
        }
        return new BigDecimal(d).compareTo(decimal) == 0;
    }

    /**
     * Appends the number literal {@code text[start, end)} (JSON's grammar, already checked) as ECMAScript writes its
     * double, without parsing it, when it has at most 15 significant digits, lies well inside the range of normal
     * doubles ({@code 1e-300} to {@code 1e300}) and is not an integer beyond 15 digits: then no other decimal of as
     * few digits reads as the same double, so the double's shortest digits are the literal's own, trailing zeros
     * dropped. False, with nothing appended, for any other literal.
     */
    static boolean appendShort(StringBuilder out, CharSequence text, int start, int end) {
        char[] digits = new char[15];
        int count = 0;
        int pendingZeros = 0; // zeros after the last nonzero digit: kept only if another nonzero digit follows
        int n = 0; // the value is 0.digits × 10^n
        boolean seen = false; // a nonzero digit
        boolean fraction = false;
        int i = start;
        boolean negative = text.charAt(i) == '-';
        if (negative) {
            i++;
        }
        for (; i < end; i++) {
            char c = text.charAt(i);
            if (c == '.') {
                fraction = true;
                continue;
            }
            if (c == 'e' || c == 'E') {
                break;
            }
            if (!seen && c == '0') {
                if (fraction) {
                    n--; // 0.001 is 0.1 × 10^-2
                }
                continue;
            }
            seen = true;
            if (!fraction) {
                n++;
            }
            if (c == '0') {
                pendingZeros++;
                continue;
            }
            if (count + pendingZeros + 1 > digits.length) {
                return false;
            }
            for (; pendingZeros > 0; pendingZeros--) {
                digits[count++] = '0';
            }
            digits[count++] = c;
        }
        if (i < end) { // the exponent
            i++;
            boolean negativeExponent = text.charAt(i) == '-';
            if (negativeExponent || text.charAt(i) == '+') {
                i++;
            }
            if (end - i > 4) {
                return false; // |exponent| of five digits or more: the slow road decides
            }
            int exponent = 0;
            for (; i < end; i++) {
                exponent = exponent * 10 + (text.charAt(i) - '0');
            }
            n += negativeExponent ? -exponent : exponent;
        }
        if (!seen) {
            out.append('0'); // any spelling of zero, -0 included
            return true;
        }
        if (n < -300 || n > 300 || (n >= count && n > 15)) {
            return false;
        }
        if (negative) {
            out.append('-');
        }
        write(out, java.nio.CharBuffer.wrap(digits, 0, count), n);
        return true;
    }

    /** Appends a finite double as ECMAScript writes it. */
    static void appendEcmaScript(StringBuilder out, double value) {
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException("not a JSON number: " + value);
        }
        if (value == 0) {
            out.append('0'); // and -0
            return;
        }
        double magnitude = Math.abs(value);
        if (value < 0) {
            out.append('-');
        }
        // the JDK's shortest digits (JDK 19 and later): the digits and where the decimal point goes
        String java = Double.toString(magnitude);
        int e = java.indexOf('E');
        String mantissa = e < 0 ? java : java.substring(0, e);
        int dot = mantissa.indexOf('.');
        StringBuilder digits = new StringBuilder(mantissa.length())
                .append(mantissa, 0, dot)
                .append(mantissa, dot + 1, mantissa.length());
        int point = dot + (e < 0 ? 0 : Integer.parseInt(java, e + 1, java.length(), 10));
        int leading = 0;
        while (leading < digits.length() - 1 && digits.charAt(leading) == '0') {
            leading++;
        }
        digits.delete(0, leading);
        point -= leading;
        int end = digits.length();
        while (end > 1 && digits.charAt(end - 1) == '0') {
            end--;
        }
        digits.setLength(end);
        if (digits.length() == 2) {
            // where one digit is enough, the JDK may still write two that are closer; ECMAScript writes one
            BigDecimal one = new BigDecimal(magnitude).round(ONE_DIGIT);
            if (one.doubleValue() == magnitude) {
                digits.setLength(0);
                digits.append(one.unscaledValue());
                point = one.precision() - one.scale();
            }
        }
        write(out, digits, point);
    }

    /** ECMAScript's layout of the digits {@code s} (k of them) for the value 0.s × 10^n. */
    private static void write(StringBuilder out, CharSequence s, int n) {
        int k = s.length();
        if (k <= n && n <= 21) {
            out.append(s);
            out.repeat('0', n - k);
        } else if (0 < n && n <= 21) {
            out.append(s, 0, n).append('.').append(s, n, k);
        } else if (-6 < n && n <= 0) {
            out.append("0.");
            out.repeat('0', -n);
            out.append(s);
        } else {
            int exponent = n - 1;
            out.append(s.charAt(0));
            if (k > 1) {
                out.append('.').append(s, 1, k);
            }
            out.append('e').append(exponent < 0 ? '-' : '+').append(Math.abs(exponent));
        }
    }
}
