package dev.exactly.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CpuProfileTest {
    private static final String FLOOR = """
            java/lang/Thread.run;dev/exactly/Raw.claim;__GI_write;tcp_sendmsg_[k];tcp_push_[k] 30
            java/lang/Thread.run;dev/exactly/Raw.claim 10
            java/lang/Thread.run;dev/exactly/Raw.complete 20
            """;
    private static final String GUARDED = """
            java/lang/Thread.run;dev/exactly/Guard.claim;__GI_write;tcp_sendmsg_[k] 15
            java/lang/Thread.run;dev/exactly/Guard.claim;java/lang/String.hashCode 40
            swapper_[k];do_idle_[k] 5
            """;

    @Test
    void selfTimeIsChargedToTheRunningFrameWithTheKernelsWorkOnItsOwnRow() {
        CpuProfile.Stacks floor = CpuProfile.Stacks.parse(FLOOR);

        assertThat(floor.total()).isEqualTo(60);
        assertThat(floor.selfByFrame())
                .isEqualTo(Map.of(
                        "__GI_write (kernel)", 30L,
                        "dev.exactly.Raw.claim", 10L,
                        "dev.exactly.Raw.complete", 20L));
        assertThat(CpuProfile.Stacks.parse(GUARDED).selfByFrame())
                .containsEntry("(kernel)", 5L)
                .containsEntry("java.lang.String.hashCode", 40L)
                .containsEntry("__GI_write (kernel)", 15L);
    }

    @Test
    void spansAddUpStackByStack() {
        CpuProfile.Stacks twice = CpuProfile.Stacks.parse(FLOOR).plus(CpuProfile.Stacks.parse(FLOOR + GUARDED));

        assertThat(twice.total()).isEqualTo(180);
        assertThat(twice.samples())
                .containsEntry("java/lang/Thread.run;dev/exactly/Raw.complete", 40L)
                .containsEntry("swapper_[k];do_idle_[k]", 5L);
    }

    @Test
    void movedFramesArePerRequestDifferencesLargestFirst() {
        // floor: 60 samples over 20 requests; guarded: 60 samples over 10 requests; 1 ms of CPU per sample
        List<CpuProfile.FrameDelta> moved =
                CpuProfile.moved(CpuProfile.Stacks.parse(FLOOR), 20, CpuProfile.Stacks.parse(GUARDED), 10, 10);

        // equal differences in the order of the frames' names; a frame that did not move comes last
        assertThat(moved)
                .extracting(CpuProfile.FrameDelta::frame)
                .containsExactly(
                        "java.lang.String.hashCode",
                        "dev.exactly.Raw.complete",
                        "(kernel)",
                        "dev.exactly.Raw.claim",
                        "__GI_write (kernel)");
        assertThat(moved.get(0).delta()).isCloseTo(4000, within(1e-9)); // 40 samples / 10 requests
        assertThat(moved.get(1).floorMicros()).isCloseTo(1000, within(1e-9)); // 20 samples / 20 requests
        assertThat(moved.get(1).delta()).isCloseTo(-1000, within(1e-9));
        assertThat(moved.get(2).delta()).isCloseTo(500, within(1e-9));
        assertThat(moved.get(3).delta()).isCloseTo(-500, within(1e-9));
        assertThat(moved.get(4).floorMicros()).isCloseTo(1500, within(1e-9));
        assertThat(moved.get(4).guardedMicros()).isCloseTo(1500, within(1e-9));
        assertThat(CpuProfile.moved(CpuProfile.Stacks.parse(FLOOR), 20, CpuProfile.Stacks.parse(GUARDED), 10, 2))
                .hasSize(2);
        assertThat(CpuProfile.micros(7, 0)).isZero();
    }

    @Test
    void aLineWithoutASampleCountIsRefused() {
        assertThatThrownBy(() -> CpuProfile.Stacks.parse("java/lang/Thread.run;a/B.c many\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a/B.c many");
    }

    @Test
    void writtenStacksReadBackTheSame(@TempDir Path dir) throws Exception {
        CpuProfile.Stacks stacks = CpuProfile.Stacks.parse(FLOOR + GUARDED);
        Path file = dir.resolve("fresh-redis.collapsed");

        stacks.write(file);

        assertThat(Files.readAllLines(file).getFirst()).endsWith(" 40"); // the largest stack first
        assertThat(CpuProfile.Stacks.parse(Files.readString(file))).isEqualTo(stacks);
    }

    @Test
    void aSpanOfTheRealProfilerSeesTheMethodThatBurnedItsCpu(@TempDir Path dir) throws Exception {
        assumeTrue(CpuProfile.supported(), "the profiler's library in the jar is Linux x64's");
        CpuProfile profile = CpuProfile.open(dir.resolve("profile"));
        assertThat(profile.directory()).isDirectory();

        profile.start();
        long burned = spinForTheProfiler(300_000_000L);
        CpuProfile.Stacks stacks = profile.stop();

        long spinning = stacks.samples().entrySet().stream()
                .filter(e -> e.getKey().contains("dev/exactly/benchmarks/CpuProfileTest.spinForTheProfiler"))
                .mapToLong(Map.Entry::getValue)
                .sum();
        // 300 ms of this thread's CPU at one sample per ms: most of them land in the spinning method
        assertThat(spinning)
                .as("samples in the spinning method (of %d in all)", stacks.total())
                .isGreaterThanOrEqualTo(100);
        assertThat(burned).isNotZero();

        profile.start();
        CpuProfile.Stacks next = profile.stop();
        assertThat(next.samples().keySet()).noneMatch(stack -> stack.contains("spinForTheProfiler"));
    }

    @Test
    void aDirectoryThatCannotBeMadeIsNamedInTheError(@TempDir Path dir) throws Exception {
        assumeTrue(CpuProfile.supported(), "the profiler's library in the jar is Linux x64's");
        Path file = Files.writeString(dir.resolve("a-file"), "not a directory");

        assertThatThrownBy(() -> CpuProfile.open(file.resolve("stacks")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("-Dexactly.bench.profile=" + file.resolve("stacks"))
                .hasMessageContaining("cannot create the directory");
    }

    /** Hashes until this thread has used {@code cpuNanos} of CPU; returns the hash so the JIT keeps the work. */
    private static long spinForTheProfiler(long cpuNanos) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long end = threads.getCurrentThreadCpuTime() + cpuNanos;
        long hash = 1;
        for (int i = 0; i < 100_000_000; i++) { // bounded: at least a few seconds of hashing on any machine
            for (int j = 0; j < 10_000; j++) {
                hash = hash * 31 + (hash >>> 7) + j;
            }
            if (threads.getCurrentThreadCpuTime() >= end) {
                break;
            }
        }
        return hash | 1;
    }
}
