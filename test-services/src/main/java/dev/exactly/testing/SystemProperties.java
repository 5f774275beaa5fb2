package dev.exactly.testing;

import java.time.Duration;
import java.util.Locale;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Settings the benchmarks, soaks and fuzzers take as system properties ({@code -Dname=value}), read strictly:
 * a value that is given but unreadable is refused with the property's name and value, where
 * {@link Integer#getInteger} would quietly run the default instead (a {@code -Dexactly.bench.seconds=60s} that
 * measures 5 s and reports it as the run asked for).
 */
public final class SystemProperties {
    private SystemProperties() {}

    /** The whole number {@code name} holds, or {@code fallback} when it is not set. */
    public static int integer(String name, int fallback) {
        Integer value = integer(name);
        return value == null ? fallback : value;
    }

    /** The whole number {@code name} holds, or null when it is not set. */
    public static @Nullable Integer integer(String name) {
        return parsed(name, Integer::valueOf);
    }

    /** The whole number {@code name} holds, as a {@code long}, or {@code fallback} when it is not set. */
    public static long longInteger(String name, long fallback) {
        Long value = parsed(name, Long::valueOf);
        return value == null ? fallback : value;
    }

    /** The whole seconds {@code name} holds, or {@code fallback} when it is not set. */
    public static Duration seconds(String name, Duration fallback) {
        Integer value = integer(name);
        return value == null ? fallback : Duration.ofSeconds(value);
    }

    /**
     * Whether {@code name} is on: {@code true} or {@code false} in any case, or no value at all
     * ({@code -Dname}), which is on; off when it is not set.
     */
    public static boolean flag(String name) {
        String text = System.getProperty(name);
        if (text == null) {
            return false;
        }
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "", "true" -> true;
            case "false" -> false;
            default -> throw refused(name, text, "true or false");
        };
    }

    /**
     * Runs {@code action} with {@code name} set to {@code value}, then gives the property back what it held (or
     * clears it): how a test reads a setting as a run would be given it.
     */
    public static void with(String name, String value, Runnable action) {
        String before = System.setProperty(name, value);
        try {
            action.run();
        } finally {
            if (before == null) {
                System.clearProperty(name);
            } else {
                System.setProperty(name, before);
            }
        }
    }

    private static <T> @Nullable T parsed(String name, Function<String, T> parse) {
        String text = System.getProperty(name);
        if (text == null) {
            return null;
        }
        try {
            return parse.apply(text.strip());
        } catch (NumberFormatException e) {
            throw refused(name, text, "a whole number");
        }
    }

    private static IllegalArgumentException refused(String name, String text, String expected) {
        return new IllegalArgumentException("-D" + name + "=" + text + " is not " + expected);
    }
}
