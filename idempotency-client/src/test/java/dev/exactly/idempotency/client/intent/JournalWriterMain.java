package dev.exactly.idempotency.client.intent;

import dev.exactly.idempotency.client.IdempotentRequest;
import java.net.URI;
import java.time.Instant;
import java.util.Arrays;

/**
 * The child of {@link FileKeyJournalTest}: writes entries with 512 KiB bodies and finishes every other
 * one, as fast as the disk allows, printing {@code written <id>} after each entry is durable, until it is
 * killed (or, bounded, after {@link FileKeyJournalTest#WRITER_LIFETIME}).
 */
public final class JournalWriterMain {
    private JournalWriterMain() {}

    public static void main(String[] args) {
        FileKeyJournal journal = FileKeyJournal.open(java.nio.file.Path.of(args[0]));
        String round = args[1];
        byte[] body = new byte[512 * 1024];
        long end = System.nanoTime() + FileKeyJournalTest.WRITER_LIFETIME.toNanos();
        for (int i = 0; System.nanoTime() < end; i++) {
            Arrays.fill(body, (byte) ('a' + i % 26));
            String id = round + "-" + i;
            IntentId intent = IntentId.of("crash", id);
            JournalEntry entry = JournalEntry.pending(
                    intent,
                    "key-" + id,
                    IdempotentRequest.builder("POST", URI.create("http://127.0.0.1:1/v1/charges"))
                            .body(body)
                            .build(),
                    Instant.now());
            journal.putIfAbsent(entry);
            System.out.println("written " + id);
            System.out.flush();
            if (i % 2 == 0) {
                journal.finish(intent, entry.key(), 201, Instant.now());
            }
        }
    }
}
