package dev.exactly.idempotency.client.intent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileKeyJournalTest extends KeyJournalContract {
    @TempDir
    Path base;

    private int journals;

    @Override
    KeyJournal journal() {
        return FileKeyJournal.open(base.resolve("journal-" + journals++));
    }

    @Test
    void entriesSurviveANewInstanceOnTheSameDirectory() {
        Path dir = base.resolve("keys");
        FileKeyJournal first = FileKeyJournal.open(dir);
        JournalEntry pending = first.putIfAbsent(entry("order-1", "key-1", T0));
        first.putIfAbsent(entry("order-2", "key-2", T0.plusSeconds(1)));
        first.finish(IntentId.of("checkout", "order-2"), "key-2", 201, T0.plusSeconds(2));

        FileKeyJournal restarted = FileKeyJournal.open(dir);

        assertThat(restarted.find(pending.intent())).contains(pending);
        assertThat(restarted.pending()).containsExactly(pending);
        assertThat(restarted
                        .putIfAbsent(entry("order-1", "another", T0.plusSeconds(9)))
                        .key())
                .isEqualTo("key-1");
        assertThat(restarted
                        .find(IntentId.of("checkout", "order-2"))
                        .orElseThrow()
                        .finalStatus())
                .isEqualTo(201);
    }

    @Test
    void aTornTemporaryFileLeftByACrashIsIgnoredAndCleanedUp() throws IOException {
        Path dir = base.resolve("keys");
        FileKeyJournal journal = FileKeyJournal.open(dir);
        JournalEntry e = journal.putIfAbsent(entry("order-1", "key-1", T0));
        Path file = journal.fileOf(e.intent());
        byte[] finished = EntryCodec.encode(e.finish(201, T0.plusSeconds(1)));
        // a crash while the update was being written: half of the new bytes in a temporary file, never renamed
        Path temp = dir.resolve(file.getFileName() + ".crash.tmp");
        Files.write(temp, java.util.Arrays.copyOf(finished, finished.length / 2));

        FileKeyJournal restarted = FileKeyJournal.open(dir);

        assertThat(restarted.find(e.intent())).as("the old entry, whole").contains(e);
        assertThat(temp).doesNotExist();
    }

    @Test
    void aDamagedEntryIsReportedAndNeverReplacedByANewKey() throws IOException {
        Path dir = base.resolve("keys");
        FileKeyJournal journal = FileKeyJournal.open(dir);
        JournalEntry e = journal.putIfAbsent(entry("order-1", "key-1", T0));
        Path file = journal.fileOf(e.intent());
        byte[] bytes = Files.readAllBytes(file);
        // what a writer without rename could leave: the file cut short (and one bit flipped in another test)
        Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length - 7));

        assertThatThrownBy(() -> journal.putIfAbsent(entry("order-1", "key-2", T0)))
                .isInstanceOf(KeyJournalException.class)
                .hasMessageContaining("no new key is minted");
        assertThatThrownBy(() -> journal.find(e.intent())).isInstanceOf(KeyJournalException.class);
        assertThat(Files.readAllBytes(file)).as("kept for a person to look at").hasSize(bytes.length - 7);

        bytes[bytes.length / 2] ^= 0x10;
        Files.write(file, bytes);
        assertThatThrownBy(() -> journal.find(e.intent())).hasMessageContaining("checksum");
    }

    @Test
    void theCodecRoundTripsAndRejectsEveryTruncation() {
        JournalEntry e = entry("order-\u00e9", "key-1", T0).finish(402, T0.plusMillis(1500));
        byte[] bytes = EntryCodec.encode(e);

        assertThat(EntryCodec.decode(bytes)).isEqualTo(e);
        for (int length = 0; length < bytes.length; length++) {
            byte[] cut = java.util.Arrays.copyOf(bytes, length);
            assertThatThrownBy(() -> EntryCodec.decode(cut)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    /**
     * The tests' classes and everything they run on, as one class path for a child JVM: the tests run on the module
     * path (the client is a named module), so its classes are on {@code jdk.module.path}, not the class path.
     */
    private static String classPath() {
        String modules = System.getProperty("jdk.module.path");
        String classes = System.getProperty("java.class.path");
        return modules == null || modules.isEmpty() ? classes : classes + java.io.File.pathSeparator + modules;
    }

    /**
     * A real crash: a child JVM writes and finishes entries with large bodies in a loop and is killed with
     * {@code kill -9} (destroyForcibly) while it writes. After each kill every entry file reads whole, every
     * entry the child reported as written is there, and the temporary files left mid-write are cleaned up.
     * The test counts the kills that landed while a write was in progress (a temporary file present), and
     * needs at least one: a run where no kill hit a write proves nothing.
     */
    @Test
    void aChildKilledWhileWritingLeavesOnlyWholeEntries() throws Exception {
        Path dir = base.resolve("crash");
        int tornWrites = 0;
        int rounds = 0;
        List<String> reported = new ArrayList<>();
        while (rounds < 8 && (tornWrites == 0 || rounds < 3)) {
            rounds++;
            Path out = base.resolve("writer-" + rounds + ".out");
            Process child = new ProcessBuilder(
                            javaLauncher(),
                            "-cp",
                            classPath(),
                            JournalWriterMain.class.getName(),
                            dir.toString(),
                            "round" + rounds)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .redirectOutput(out.toFile())
                    .start();
            int atLeast = 3 + rounds;
            try {
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> written(out).size() >= atLeast || !child.isAlive());
                assertThat(child.isAlive()).as("the writer is still writing").isTrue();
                // then aim the kill at a write in progress: as soon as a temporary file is seen (it may be
                // renamed before the signal lands; the count below says how often the kill hit)
                await().atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(1))
                        .until(() -> hasTemporaryFile(dir) || !child.isAlive());
            } finally {
                child.destroyForcibly();
                assertThat(child.waitFor(20, TimeUnit.SECONDS)).isTrue();
            }
            reported.addAll(written(out));
            if (hasTemporaryFile(dir)) {
                tornWrites++;
            }

            FileKeyJournal journal = FileKeyJournal.open(dir);

            for (String id : reported) {
                assertThat(journal.find(IntentId.of("crash", id)))
                        .as("entry %s reported written", id)
                        .isPresent();
            }
            journal.pending(); // reads every entry file: throws if any is not whole
            try (Stream<Path> files = Files.list(dir)) {
                assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
            }
        }
        System.out.printf(
                "journal writer killed %d times, %d of them mid-write; %d entries reported written, all whole%n",
                rounds, tornWrites, reported.size());
        assertThat(tornWrites).as("kills that landed mid-write, of %d", rounds).isPositive();
    }

    private static boolean hasTemporaryFile(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return false;
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.anyMatch(p -> p.getFileName().toString().endsWith(".tmp"));
        }
    }

    /** The ids the writer reported as durable (complete lines only). */
    private static List<String> written(Path out) throws IOException {
        String text = Files.readString(out, StandardCharsets.UTF_8);
        List<String> ids = new ArrayList<>();
        int start = 0;
        for (int nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
            String line = text.substring(start, nl);
            if (line.startsWith("written ")) {
                ids.add(line.substring("written ".length()));
            }
            start = nl + 1;
        }
        return ids;
    }

    private static String javaLauncher() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Bounded: {@link JournalWriterMain} stops by itself after a while if nobody kills it. */
    static final Duration WRITER_LIFETIME = Duration.ofSeconds(60);

    @Test
    void aDamagedEntryHidesNoOtherIntentAndIsKeptAndNamed() throws IOException {
        Path dir = base.resolve("keys");
        FileKeyJournal journal = FileKeyJournal.open(dir);
        JournalEntry pending = journal.putIfAbsent(entry("order-1", "key-1", T0));
        journal.putIfAbsent(entry("order-2", "key-2", T0));
        journal.finish(IntentId.of("checkout", "order-2"), "key-2", 201, T0.plusSeconds(1));
        Path damaged = dir.resolve("0".repeat(64) + ".entry");
        Files.write(damaged, new byte[] {1, 2, 3});

        assertThat(journal.pending()).containsExactly(pending);
        assertThat(journal.removeFinishedBefore(T0.plusSeconds(60)))
                .as("the purge goes past it")
                .isEqualTo(1);
        assertThat(journal.unreadable()).containsExactly(damaged);
        assertThat(damaged).exists();
    }
}
