package dev.exactly.benchmarks;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import one.profiler.AsyncProfiler;
import one.profiler.Counter;

/**
 * CPU samples of this JVM over chosen spans, for the benchmarks' {@code -Dexactly.bench.profile=DIR}:
 * async-profiler's CPU event, one sample per millisecond of CPU time of any thread (Java, JIT, GC and the
 * kernel's work on the JVM's behalf), whole stacks. At the rates the benchmarks reach, a flight recording's
 * execution samples (a few threads every 10-20 ms) say too little to place a difference of a few microseconds
 * per request; one sample per millisecond of CPU gives thousands per second of load. Each sample is a signal and
 * a stack walk in the JVM it measures: a profiled run's rates are not the ones to quote.
 *
 * <p>Each span is its own {@link Stacks}: started with {@link #start()}, ended with {@link #stop()}. A
 * benchmark adds up the spans of one endpoint and compares its self time per request frame by frame with its
 * floor's ({@link #moved}).
 */
public final class CpuProfile {
    /** The system property that names the directory the stacks are written to. */
    public static final String PROPERTY = "exactly.bench.profile";

    /** CPU time per sample, in microseconds. */
    static final long INTERVAL_MICROS = 1000;

    private final AsyncProfiler profiler;
    private final Path directory;

    private CpuProfile(AsyncProfiler profiler, Path directory) {
        this.profiler = profiler;
        this.directory = directory;
    }

    /** The profile asked for by {@value #PROPERTY}, or empty when the property is not set. */
    public static Optional<CpuProfile> fromSystemProperty() throws IOException {
        String dir = System.getProperty(PROPERTY);
        return dir == null || dir.isBlank() ? Optional.empty() : Optional.of(open(Path.of(dir)));
    }

    /**
     * Loads the profiler into this JVM (its native library, Linux x64, from the jar), creates {@code directory}
     * and samples an empty span to see that the machine lets it.
     *
     * @throws IllegalStateException on another platform, where the library cannot be loaded, or where sampling
     *                               cannot start
     */
    public static CpuProfile open(Path directory) throws IOException {
        if (!supported()) {
            throw new IllegalStateException("-D" + PROPERTY + " needs Linux on x64 (the profiler's native library"
                    + " in the benchmark jar is that platform's); this is " + System.getProperty("os.name") + " on "
                    + System.getProperty("os.arch"));
        }
        AsyncProfiler profiler;
        try {
            profiler = AsyncProfiler.getInstance();
        } catch (RuntimeException | LinkageError e) {
            throw new IllegalStateException("could not load the CPU profiler's native library: " + e, e);
        }
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new IOException(
                    "-D" + PROPERTY + "=" + directory + ": cannot create the directory for the stacks (" + e + ")", e);
        }
        CpuProfile profile = new CpuProfile(profiler, directory);
        // a span now, so that a machine whose kernel refuses the sampling fails the run before its warm-up, not after
        profile.start();
        profile.stop();
        return profile;
    }

    /** Whether this JVM runs where the profiler's native library in the jar does: Linux on x64. */
    public static boolean supported() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        return os.contains("linux") && (arch.equals("amd64") || arch.equals("x86_64"));
    }

    /** Where the stacks are written. */
    public Path directory() {
        return directory;
    }

    /** Starts a span: samples from now on, none kept from a span before. */
    public void start() {
        execute("start,event=cpu,interval=" + INTERVAL_MICROS + "us");
    }

    /** Ends the span and returns its samples. */
    public Stacks stop() {
        execute("stop");
        return Stacks.parse(profiler.dumpCollapsed(Counter.SAMPLES));
    }

    private void execute(String command) {
        try {
            profiler.execute(command);
        } catch (IOException e) {
            throw new IllegalStateException("profiler command " + command + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * The frames whose self time per request differs most between {@code guarded} and its {@code floor}, the
     * largest differences first, at most {@code limit} of them.
     */
    public static List<FrameDelta> moved(
            Stacks floor, long floorRequests, Stacks guarded, long guardedRequests, int limit) {
        Map<String, Long> floorSelf = floor.selfByFrame();
        Map<String, Long> guardedSelf = guarded.selfByFrame();
        Set<String> frames = new HashSet<>(floorSelf.keySet());
        frames.addAll(guardedSelf.keySet());
        List<FrameDelta> rows = new ArrayList<>(frames.size());
        for (String frame : frames) {
            rows.add(new FrameDelta(
                    frame,
                    micros(floorSelf.getOrDefault(frame, 0L), floorRequests),
                    micros(guardedSelf.getOrDefault(frame, 0L), guardedRequests)));
        }
        rows.sort(Comparator.comparingDouble((FrameDelta row) -> -Math.abs(row.delta()))
                .thenComparing(FrameDelta::frame));
        return List.copyOf(rows.subList(0, Math.min(limit, rows.size())));
    }

    /** CPU microseconds per request that {@code samples} stand for. */
    public static double micros(long samples, long requests) {
        return requests <= 0 ? 0 : (double) samples * INTERVAL_MICROS / requests;
    }

    /** One frame's self time per request on the floor and behind the guard, in microseconds. */
    public record FrameDelta(String frame, double floorMicros, double guardedMicros) {
        /** Guarded minus floor. */
        public double delta() {
            return guardedMicros - floorMicros;
        }
    }

    /**
     * Samples by whole stack, as async-profiler's collapsed format writes them: frames from the thread's
     * root to the running one, separated by {@code ;}, kernel frames marked {@code _[k]}.
     */
    public record Stacks(Map<String, Long> samples) {
        private static final String KERNEL = "_[k]";

        public Stacks {
            samples = Map.copyOf(samples);
        }

        /** Reads the collapsed format: one stack per line, its sample count after the last space. */
        public static Stacks parse(String collapsed) {
            Map<String, Long> samples = new HashMap<>();
            for (String line : collapsed.split("\n", -1)) {
                int space = line.lastIndexOf(' ');
                if (space <= 0) {
                    continue;
                }
                long count;
                try {
                    count = Long.parseLong(line.substring(space + 1).strip());
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("not a line of collapsed stacks: " + line, e);
                }
                samples.merge(line.substring(0, space), count, Long::sum);
            }
            return new Stacks(samples);
        }

        /** These samples and {@code other}'s. */
        public Stacks plus(Stacks other) {
            Map<String, Long> sum = new HashMap<>(samples);
            other.samples.forEach((stack, count) -> sum.merge(stack, count, Long::sum));
            return new Stacks(sum);
        }

        /** All samples. */
        public long total() {
            return samples.values().stream().mapToLong(Long::longValue).sum();
        }

        /**
         * Samples by the frame that was running: the last frame of each stack outside the kernel, Java frames
         * with dots ({@code java.lang.String.hashCode}); time the kernel spent on its behalf (a system call, a
         * page fault) is its own row, the frame followed by {@code (kernel)}.
         */
        public Map<String, Long> selfByFrame() {
            Map<String, Long> self = new HashMap<>();
            samples.forEach((stack, count) -> self.merge(runningFrame(stack), count, Long::sum));
            return self;
        }

        private static String runningFrame(String stack) {
            String[] frames = stack.split(";", -1);
            int last = frames.length - 1;
            while (last > 0 && frames[last].endsWith(KERNEL)) {
                last--;
            }
            String frame = frames[last];
            boolean inKernel = last < frames.length - 1;
            if (frame.endsWith(KERNEL)) { // a stack of kernel frames only
                return "(kernel)";
            }
            String name = frame.indexOf('/') >= 0 && frame.indexOf(' ') < 0 ? frame.replace('/', '.') : frame;
            return inKernel ? name + " (kernel)" : name;
        }

        /** Writes the collapsed format (flame graph tools read it), the largest stacks first. */
        public void write(Path file) throws IOException {
            try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
                List<Map.Entry<String, Long>> rows = new ArrayList<>(samples.entrySet());
                rows.sort(Map.Entry.<String, Long>comparingByValue()
                        .reversed()
                        .thenComparing(Map.Entry.comparingByKey()));
                for (Map.Entry<String, Long> row : rows) {
                    out.write(row.getKey() + " " + row.getValue() + "\n");
                }
            }
        }
    }
}
