package dev.exactly.testing;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The CPU time of this machine's processes by name (PostgreSQL's {@code postgres} processes: the
 * postmaster, every backend, the WAL writer, the checkpointer; {@code redis-server}; {@code wrk}) and of
 * the machine as a whole, read from {@code /proc}: what a benchmark's work costs each process in user and
 * system time, which the load of other processes stretches far less than it stretches a rate. A process
 * that exits takes its time along, so a figure is sound while the processes it counts live through the
 * interval, as a server's backends do while their pools keep their connections. Empty where {@code /proc}
 * does not show the machine (another OS, too few rights).
 */
public final class ProcessCpu {
    private static final Path PROC = Path.of("/proc");
    /** Linux reports process and machine times in clock ticks of 1/100 s on every architecture this runs on. */
    private static final long MICROS_PER_TICK = 10_000;

    private ProcessCpu() {}

    /** One process's name (its {@code comm}) and the user and system ticks it used so far. */
    record Sample(String name, long ticks) {}

    /**
     * Every process's CPU ticks at one moment, by PID, the machine's busy and total ticks over all its CPUs
     * ({@code /proc/stat}: total less idle and I/O wait is busy), and the ticks of this process's children
     * that ended and were waited for (a load generator run as a child and gone by the second snapshot counts
     * there, not among the processes).
     */
    public record Snapshot(
            Map<Long, Sample> processes, long machineBusyTicks, long machineTotalTicks, long endedChildrenTicks) {}

    /** Reads every process and the machine now; empty where {@code /proc} shows neither. */
    public static Optional<Snapshot> snapshot() {
        Map<Long, Sample> processes = new HashMap<>();
        long[] machine;
        long children;
        try (DirectoryStream<Path> entries =
                Files.newDirectoryStream(PROC, p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path process : entries) {
                Sample sample = sampleOf(process.resolve("stat"));
                if (sample != null) {
                    processes.put(Long.parseLong(process.getFileName().toString()), sample);
                }
            }
            machine = machineTicks(Files.readString(PROC.resolve("stat")));
            children = endedChildrenTicks(Files.readString(PROC.resolve("self/stat")));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        return processes.isEmpty()
                ? Optional.empty()
                : Optional.of(new Snapshot(processes, machine[0], machine[1], children));
    }

    /**
     * The CPU time of this process's children that ended and were waited for between two snapshots, in
     * microseconds (a child that ran through the interval, as a load generator run for it does).
     */
    public static long endedChildrenMicros(Snapshot before, Snapshot after) {
        return (after.endedChildrenTicks() - before.endedChildrenTicks()) * MICROS_PER_TICK;
    }

    /**
     * The CPU time the processes named {@code name} used between two snapshots, in microseconds: what each
     * one present in both added, plus all of what one started meanwhile used. One that exited meanwhile took
     * its time along and counts nothing (it would otherwise subtract its whole life); a PID reused by a
     * process of another name counts as a new process.
     */
    public static long micros(Snapshot before, Snapshot after, String name) {
        long ticks = 0;
        for (Map.Entry<Long, Sample> process : after.processes().entrySet()) {
            Sample now = process.getValue();
            if (!now.name().equals(name)) {
                continue;
            }
            Sample then = before.processes().get(process.getKey());
            ticks += now.ticks() - (then != null && then.name().equals(name) ? then.ticks() : 0);
        }
        return ticks * MICROS_PER_TICK;
    }

    /** The CPU time the whole machine was busy between two snapshots, in microseconds summed over its CPUs. */
    public static long machineBusyMicros(Snapshot before, Snapshot after) {
        return (after.machineBusyTicks() - before.machineBusyTicks()) * MICROS_PER_TICK;
    }

    /** The share of the machine's CPU time that was busy between two snapshots (0 to 1). */
    public static double machineBusyShare(Snapshot before, Snapshot after) {
        long total = after.machineTotalTicks() - before.machineTotalTicks();
        return total <= 0 ? 0 : (double) (after.machineBusyTicks() - before.machineBusyTicks()) / total;
    }

    private static @Nullable Sample sampleOf(Path stat) {
        try {
            return parse(Files.readString(stat));
        } catch (IOException | RuntimeException gone) { // exited meanwhile, or not ours to read
            return null;
        }
    }

    /**
     * Reads {@code pid (comm) state ppid ... utime stime ...}: the name sits in parentheses and may hold
     * spaces and parentheses, so the fields are counted after its last closing parenthesis; utime and stime
     * are fields 14 and 15.
     */
    static Sample parse(String statLine) {
        String[] fields = fields(statLine);
        return new Sample(
                statLine.substring(statLine.indexOf('(') + 1, statLine.lastIndexOf(')')),
                Long.parseLong(fields[11]) + Long.parseLong(fields[12]));
    }

    /** cutime and cstime (fields 16 and 17) of a {@code /proc/<pid>/stat} line: its waited-for children's ticks. */
    static long endedChildrenTicks(String statLine) {
        String[] fields = fields(statLine);
        return Long.parseLong(fields[13]) + Long.parseLong(fields[14]);
    }

    /** The fields after the name: fields[0] is the state (field 3), so field n is fields[n - 3]. */
    private static String[] fields(String statLine) {
        int open = statLine.indexOf('(');
        int close = statLine.lastIndexOf(')');
        if (open < 0 || close < open) {
            throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + statLine);
        }
        return statLine.substring(close + 2).split(" ");
    }

    /**
     * The machine's busy and total ticks from the first line of {@code /proc/stat} ({@code cpu user nice
     * system idle iowait irq softirq steal ...}): busy is the total less idle and I/O wait.
     */
    static long[] machineTicks(String procStat) {
        String first = procStat.substring(0, procStat.indexOf('\n'));
        String[] fields = first.trim().split("\\s+", -1);
        if (!fields[0].equals("cpu")) {
            throw new IllegalArgumentException("not /proc/stat: " + first);
        }
        long total = 0;
        // user nice system idle iowait irq softirq steal; guest and guest_nice are inside user and nice already
        for (int i = 1; i <= Math.min(8, fields.length - 1); i++) {
            total += Long.parseLong(fields[i]);
        }
        long idle = Long.parseLong(fields[4]) + (fields.length > 5 ? Long.parseLong(fields[5]) : 0);
        return new long[] {total - idle, total};
    }
}
