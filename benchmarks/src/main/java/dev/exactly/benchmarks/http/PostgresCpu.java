package dev.exactly.benchmarks.http;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The CPU time of the local PostgreSQL server's processes (the postmaster, the backends of every pool,
 * the WAL writer, the checkpointer), read from {@code /proc}: what requests on a PostgreSQL endpoint cost
 * the database server, in user and system time, which the load of other processes stretches far less
 * than it stretches a rate. A backend that exits takes its time along, so the figure is sound while the
 * pools keep their connections, as they do during a phase. Empty where {@code /proc} does not show the
 * server's processes (another machine, another OS, too few rights).
 */
final class PostgresCpu {
    private static final Path PROC = Path.of("/proc");
    /** Linux reports process times in clock ticks of 1/100 s on every architecture this runs on. */
    private static final long MICROS_PER_TICK = 10_000;

    private PostgresCpu() {}

    /**
     * The CPU ticks of every process named {@code postgres} now, by PID; empty where {@code /proc} shows
     * none.
     */
    static Optional<Map<Long, Long>> snapshot() {
        Map<Long, Long> ticks = new HashMap<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(PROC, p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path process : entries) {
                long used = ticksOf(process.resolve("stat"));
                if (used >= 0) {
                    ticks.put(Long.parseLong(process.getFileName().toString()), used);
                }
            }
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        return ticks.isEmpty() ? Optional.empty() : Optional.of(ticks);
    }

    /**
     * The CPU time the server's processes used between two snapshots, in microseconds: what each process
     * present in both added, plus all of what a process started meanwhile used. A process that exited
     * meanwhile took its time along and counts nothing (it would otherwise subtract its whole life).
     */
    static long microsBetween(Map<Long, Long> before, Map<Long, Long> after) {
        long ticks = 0;
        for (Map.Entry<Long, Long> process : after.entrySet()) {
            ticks += process.getValue() - before.getOrDefault(process.getKey(), 0L);
        }
        return ticks * MICROS_PER_TICK;
    }

    /** utime + stime of one process when it is a PostgreSQL server process, else -1. */
    static long ticksOf(Path stat) {
        String line;
        try {
            line = Files.readString(stat);
        } catch (IOException | RuntimeException gone) { // exited meanwhile, or not ours to read
            return -1;
        }
        return parse(line);
    }

    /**
     * Reads {@code pid (comm) state ppid ... utime stime ...}: the name sits in parentheses and may hold
     * spaces, so the fields are counted after its closing parenthesis; utime and stime are fields 14 and 15.
     */
    static long parse(String statLine) {
        int open = statLine.indexOf('(');
        int close = statLine.lastIndexOf(')');
        if (open < 0 || close < open || !statLine.substring(open + 1, close).equals("postgres")) {
            return -1;
        }
        String[] fields = statLine.substring(close + 2).split(" ");
        // fields[0] is the state (field 3), so field n is fields[n - 3]
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }
}
