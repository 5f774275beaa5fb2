package dev.exactly.psp.internal;

import java.util.Arrays;

/**
 * Append-only records of bytes, kept in large chunks. The processor's book keeps every charge for the
 * life of the process; held as object graphs (strings, maps, instants: about twenty objects a charge),
 * what a busy book added between two young collections was copied from survivor space to survivor space
 * at every collection until it was old enough to be promoted, and the collector's pauses grew with the
 * rate of charges (about 60 ms each at 1,400 charges a second, in the service that runs the book in its
 * own process). Here a record's bytes go into a chunk of {@value #CHUNK_BYTES} bytes, an array large
 * enough for the collector to allocate in the old generation at once, and an array of bytes holds no
 * references to scan: nothing stays in the young generation for a record but the handle that finds it.
 *
 * <p>A record is addressed by a {@code long} handle (the chunk's index in the high 32 bits, the record's
 * offset in the low ones) and is immutable once appended. Appends are serialised; reads take no lock: a
 * handle obtained through a safe publication (a concurrent map, a lock) sees its record's bytes.
 */
final class Slab {
    /** The size of a chunk (a record larger than a chunk gets a chunk of its own size). */
    static final int CHUNK_BYTES = 4 << 20;

    private static final int LENGTH_BYTES = 4;

    private volatile byte[][] chunks = new byte[0][];
    /** Where the next record goes in the last chunk; a full chunk forces a new one. */
    private int position = CHUNK_BYTES;

    /** Appends a record; returns its handle. */
    synchronized long append(byte[] record) {
        int needed = LENGTH_BYTES + record.length;
        byte[][] current = chunks;
        byte[] chunk;
        if (current.length == 0 || position + needed > current[current.length - 1].length) {
            chunk = new byte[Math.max(CHUNK_BYTES, needed)];
            current = Arrays.copyOf(current, current.length + 1);
            current[current.length - 1] = chunk;
            position = 0;
        } else {
            chunk = current[current.length - 1];
        }
        int at = position;
        chunk[at] = (byte) (record.length >>> 24);
        chunk[at + 1] = (byte) (record.length >>> 16);
        chunk[at + 2] = (byte) (record.length >>> 8);
        chunk[at + 3] = (byte) record.length;
        System.arraycopy(record, 0, chunk, at + LENGTH_BYTES, record.length);
        position = at + needed;
        // published after the bytes: a reader that sees this array sees them
        chunks = current;
        return ((long) (current.length - 1) << 32) | at;
    }

    /** A copy of the record behind {@code handle}. */
    byte[] read(long handle) {
        byte[][] current = chunks;
        int index = (int) (handle >>> 32);
        int at = (int) handle;
        if (index < 0 || index >= current.length || at < 0 || at + LENGTH_BYTES > current[index].length) {
            throw new IllegalArgumentException("no record at " + Long.toHexString(handle));
        }
        byte[] chunk = current[index];
        int length = ((chunk[at] & 0xFF) << 24)
                | ((chunk[at + 1] & 0xFF) << 16)
                | ((chunk[at + 2] & 0xFF) << 8)
                | (chunk[at + 3] & 0xFF);
        return Arrays.copyOfRange(chunk, at + LENGTH_BYTES, at + LENGTH_BYTES + length);
    }

    /** Bytes held in chunks (the records, their lengths, and the unused ends of chunks). */
    long capacity() {
        long total = 0;
        for (byte[] chunk : chunks) {
            total += chunk.length;
        }
        return total;
    }
}
