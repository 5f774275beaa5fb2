package dev.exactly.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * What the machine looked like when a benchmark ran: cores, load average, JVM. Figures from a loaded
 * machine are slower, and ratios measured in one run stay comparable only if the load did not change
 * much between the two sides of a ratio; so every report prints this before and after.
 *
 * @param at          when it was sampled
 * @param cores       available processors
 * @param loadAverage the 1, 5 and 15 minute load averages ({@code /proc/loadavg}), or the JVM's 1 minute figure
 * @param jvm         the Java runtime version and VM name
 */
public record Machine(Instant at, int cores, String loadAverage, String jvm) {
    private static final Path LOADAVG = Path.of("/proc/loadavg");

    /** Samples the machine now. */
    public static Machine sample(InstantSource clock) {
        return new Machine(
                clock.instant(),
                Runtime.getRuntime().availableProcessors(),
                readLoadAverage(),
                Runtime.version() + " " + System.getProperty("java.vm.name", "?"));
    }

    private static String readLoadAverage() {
        try {
            String[] fields = Files.readString(LOADAVG).strip().split("\\s+", -1);
            if (fields.length >= 3) {
                return fields[0] + " " + fields[1] + " " + fields[2];
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: fall back to what the JVM offers
        }
        double oneMinute = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return oneMinute < 0 ? "unknown" : String.format("%.2f", oneMinute);
    }

    /** One line: {@code 2026-11-30 05:10 UTC, 2 cores, load 1.15 2.21 4.18, JVM 25+36 ...}. */
    public String describe() {
        return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'").format(at.atOffset(ZoneOffset.UTC)) + ", " + cores
                + " cores, load average " + loadAverage + ", JVM " + jvm;
    }
}
