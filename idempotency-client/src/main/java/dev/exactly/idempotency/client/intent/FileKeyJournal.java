package dev.exactly.idempotency.client.intent;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A journal in a directory: one file per intent, named by the SHA-256 of the intent
 * ({@code <hex>.entry}), holding the entry in the format of {@link EntryCodec} with a CRC-32C.
 *
 * <p>Every write goes to a temporary file in the same directory, is forced to the disk
 * ({@code fsync}), then renamed over the entry's file atomically, and the directory is forced too, so
 * that a crash at any moment leaves either the old entry or the new one, never a torn one. Writers of
 * one directory exclude each other, in this process and across processes, with a lock on the
 * {@code journal.lock} file; readers need no lock. Temporary files left by a crash are deleted when a
 * journal is opened. An entry file that cannot be read is reported, never replaced by a new key.
 */
public final class FileKeyJournal implements KeyJournal {
    private static final String SUFFIX = ".entry";
    private static final String TEMP_SUFFIX = ".tmp";
    private static final String LOCK_FILE = "journal.lock";
    /** One lock per directory in this JVM: a {@link FileLock} excludes other processes only. */
    private static final ConcurrentMap<Path, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

    private final Path directory;
    private final ReentrantLock localLock;

    private FileKeyJournal(Path directory) {
        this.directory = directory;
        this.localLock = LOCKS.computeIfAbsent(directory, d -> new ReentrantLock());
    }

    /**
     * Opens (and creates if needed) the journal in {@code directory}, and deletes the temporary files a
     * crash mid-write may have left.
     */
    public static FileKeyJournal open(Path directory) {
        Objects.requireNonNull(directory, "directory");
        Path dir;
        try {
            Files.createDirectories(directory);
            dir = directory.toRealPath();
        } catch (IOException e) {
            throw new KeyJournalException("cannot open the key journal directory " + directory, e);
        }
        FileKeyJournal journal = new FileKeyJournal(dir);
        journal.locked(() -> {
            try (DirectoryStream<Path> temps = Files.newDirectoryStream(dir, "*" + TEMP_SUFFIX)) {
                for (Path temp : temps) {
                    Files.deleteIfExists(temp);
                }
            }
            return null;
        });
        return journal;
    }

    /** The journal's directory. */
    public Path directory() {
        return directory;
    }

    @Override
    public JournalEntry putIfAbsent(JournalEntry candidate) {
        Objects.requireNonNull(candidate, "candidate");
        return locked(() -> {
            Path file = fileOf(candidate.intent());
            Optional<JournalEntry> existing = read(file);
            if (existing.isPresent()) {
                return existing.get();
            }
            write(file, EntryCodec.encode(candidate));
            return candidate;
        });
    }

    @Override
    public Optional<JournalEntry> find(IntentId intent) {
        try {
            return read(fileOf(intent));
        } catch (IOException e) {
            throw new KeyJournalException("cannot read the key journal entry of " + intent, e);
        }
    }

    @Override
    public boolean finish(IntentId intent, String key, int status, Instant at) {
        return locked(() -> {
            Path file = fileOf(intent);
            Optional<JournalEntry> existing = read(file);
            if (existing.isEmpty() || !existing.get().key().equals(key)) {
                return false;
            }
            write(file, EntryCodec.encode(existing.get().finish(status, at)));
            return true;
        });
    }

    /**
     * The pending entries that can be read, oldest first. An entry file that cannot be decoded (damaged on
     * disk) is kept and left out here, so that it hides no other intent; {@link #unreadable()} names it.
     */
    @Override
    public List<JournalEntry> pending() {
        List<JournalEntry> out = new ArrayList<>();
        for (Path file : entryFiles()) {
            try {
                readable(file).filter(e -> !e.finished()).ifPresent(out::add);
            } catch (IOException e) {
                throw new KeyJournalException("cannot read " + file, e);
            }
        }
        out.sort(Comparator.comparing(JournalEntry::createdAt));
        return out;
    }

    /**
     * The entry files that cannot be decoded: kept as they are (an intent's key may be in them, and no new key
     * is minted for it), skipped by {@link #pending()} and purges, for an operator to look at.
     */
    public List<Path> unreadable() {
        List<Path> out = new ArrayList<>();
        for (Path file : entryFiles()) {
            try {
                read(file);
            } catch (KeyJournalException e) {
                out.add(file);
            } catch (IOException e) {
                throw new KeyJournalException("cannot read " + file, e);
            }
        }
        return out;
    }

    /** The entry in {@code file}, or empty when it is absent or cannot be decoded. */
    private static Optional<JournalEntry> readable(Path file) throws IOException {
        try {
            return read(file);
        } catch (KeyJournalException damaged) {
            return Optional.empty();
        }
    }

    @Override
    public int removeFinishedBefore(Instant cutoff) {
        return locked(() -> {
            int removed = 0;
            for (Path file : entryFiles()) {
                Optional<JournalEntry> entry = readable(file);
                Instant finished = entry.map(JournalEntry::finishedAt).orElse(null);
                if (finished != null && finished.isBefore(cutoff)) {
                    Files.deleteIfExists(file);
                    removed++;
                }
            }
            if (removed > 0) {
                forceDirectory();
            }
            return removed;
        });
    }

    /** The file of {@code intent}: {@code <sha256(namespace NUL id) in hex>.entry}. */
    Path fileOf(IntentId intent) {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        sha256.update(intent.namespace().getBytes(StandardCharsets.UTF_8));
        sha256.update((byte) 0);
        sha256.update(intent.id().getBytes(StandardCharsets.UTF_8));
        return directory.resolve(HexFormat.of().formatHex(sha256.digest()) + SUFFIX);
    }

    private List<Path> entryFiles() {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, "*" + SUFFIX)) {
            entries.forEach(files::add);
        } catch (IOException e) {
            throw new KeyJournalException("cannot list the key journal " + directory, e);
        }
        return files;
    }

    private static Optional<JournalEntry> read(Path file) throws IOException {
        byte[] data;
        try {
            data = Files.readAllBytes(file);
        } catch (NoSuchFileException absent) {
            return Optional.empty();
        }
        try {
            return Optional.of(EntryCodec.decode(data));
        } catch (IllegalArgumentException e) {
            throw new KeyJournalException(
                    "the key journal entry " + file + " cannot be read (" + e.getMessage()
                            + "); it is kept, and no new key is minted for its intent: the intent may have been sent with the key it held",
                    e);
        }
    }

    /** Temporary file, fsync, atomic rename over {@code file}, fsync of the directory. */
    private void write(Path file, byte[] data) throws IOException {
        Path temp = directory.resolve(file.getFileName() + "." + UUID.randomUUID() + TEMP_SUFFIX);
        try {
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer buffer = ByteBuffer.wrap(data);
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
                out.force(true);
            }
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temp);
        }
        forceDirectory();
    }

    /** Makes a rename or delete in the directory durable. Windows cannot open a directory; NTFS journals it. */
    private void forceDirectory() throws IOException {
        if (File.separatorChar == '\\') {
            return;
        }
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    @FunctionalInterface
    private interface IoAction<T extends @Nullable Object> {
        T run() throws IOException;
    }

    private <T extends @Nullable Object> T locked(IoAction<T> action) {
        localLock.lock();
        try (FileChannel lockChannel = FileChannel.open(
                        directory.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock ignored = lockChannel.lock()) {
            return action.run();
        } catch (IOException e) {
            throw new KeyJournalException("key journal " + directory + ": " + e, e);
        } finally {
            localLock.unlock();
        }
    }

    @Override
    public String toString() {
        return "FileKeyJournal[" + directory + "]";
    }
}
