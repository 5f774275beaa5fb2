package dev.exactly.ledger;

import dev.exactly.ledger.LedgerValidationException.Reason;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * An ISO 4217 currency and its minor-unit exponent: USD 2 (cents), JPY 0, KWD 3. Only codes in the
 * shipped table ({@code dev/exactly/ledger/iso4217.properties}) exist; anything else is refused with
 * {@link Reason#UNKNOWN_CURRENCY}, so an amount can never be read with the wrong number of decimals.
 *
 * @param code     the three-letter upper-case ISO 4217 code
 * @param exponent the number of decimals of the minor unit (0 to 4)
 */
public record Currency(String code, int exponent) {

    private static final Pattern CODE = Pattern.compile("[A-Z]{3}");
    private static final Map<String, Integer> EXPONENTS = load();
    private static final Map<String, Currency> TABLE = table(EXPONENTS);

    /** Checks that the pair is the one in the ISO 4217 table. */
    public Currency {
        Integer known = EXPONENTS.get(code);
        if (known == null) {
            throw unknown(code);
        }
        if (known != exponent) {
            throw new LedgerValidationException(
                    Reason.UNKNOWN_CURRENCY, "ISO 4217 " + code + " has " + known + " decimals, not " + exponent);
        }
    }

    /**
     * The currency with this code; lower case is accepted ({@code "usd"}).
     *
     * @throws LedgerValidationException {@link Reason#UNKNOWN_CURRENCY} if the code is not in the table
     */
    public static Currency of(String code) {
        Currency currency = TABLE.get(code.toUpperCase(Locale.ROOT));
        if (currency == null) {
            throw unknown(code);
        }
        return currency;
    }

    /** Whether the table has this code (lower case accepted). */
    public static boolean isKnown(String code) {
        return TABLE.containsKey(code.toUpperCase(Locale.ROOT));
    }

    /** Every currency of the table, ordered by code. */
    public static Map<String, Currency> table() {
        return TABLE;
    }

    @Override
    public String toString() {
        return code;
    }

    private static LedgerValidationException unknown(String code) {
        String shown = code.length() > 16 ? code.substring(0, 16) + "..." : code;
        return new LedgerValidationException(Reason.UNKNOWN_CURRENCY, "unknown currency '" + shown + "'");
    }

    private static Map<String, Integer> load() {
        Properties properties = new Properties();
        try (InputStream in = Currency.class.getResourceAsStream("iso4217.properties")) {
            if (in == null) {
                throw new IllegalStateException("iso4217.properties is missing from the classpath");
            }
            properties.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, Integer> exponents = new TreeMap<>();
        for (String code : properties.stringPropertyNames()) {
            int exponent = Integer.parseInt(properties.getProperty(code).trim());
            if (!CODE.matcher(code).matches() || exponent < 0 || exponent > 4) {
                throw new IllegalStateException("bad ISO 4217 table line " + code + "=" + exponent);
            }
            exponents.put(code, exponent);
        }
        return Collections.unmodifiableMap(exponents);
    }

    private static Map<String, Currency> table(Map<String, Integer> exponents) {
        Map<String, Currency> table = new TreeMap<>();
        exponents.forEach((code, exponent) -> table.put(code, new Currency(code, exponent)));
        return Collections.unmodifiableMap(table);
    }
}
