package dev.exactly.psp.internal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The book's records as bytes for its {@link Slab}: fields in a fixed order through
 * {@link DataOutputStream}, strings in its modified UTF-8 (any {@code char} sequence, lone surrogates
 * included, comes back as it went; every string the book keeps is bounded well below its 65,535 bytes).
 */
final class Records {
    private Records() {}

    interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    interface Reader<T> {
        T read(DataInputStream in) throws IOException;
    }

    static byte[] write(Writer writer) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writer.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static <T> T read(byte[] record, Reader<T> reader) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(record))) {
            T value = reader.read(in);
            if (in.available() != 0) {
                throw new IllegalStateException("a record of " + record.length + " bytes was not read to its end");
            }
            return value;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The record's first string (a record that begins with one). */
    static String first(byte[] record) {
        return prefix(record, 1);
    }

    /** The record's second string (a record that begins with two). */
    static String second(byte[] record) {
        return prefix(record, 2);
    }

    private static String prefix(byte[] record, int nth) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(record))) {
            String value = in.readUTF();
            for (int i = 1; i < nth; i++) {
                value = in.readUTF();
            }
            return value;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void writeNullable(DataOutputStream out, @Nullable String value) throws IOException {
        out.writeBoolean(value != null);
        if (value != null) {
            out.writeUTF(value);
        }
    }

    static @Nullable String readNullable(DataInputStream in) throws IOException {
        return in.readBoolean() ? in.readUTF() : null;
    }

    /** A map's pairs in its iteration order. */
    static void writeMap(DataOutputStream out, Map<String, String> map) throws IOException {
        out.writeInt(map.size());
        for (Map.Entry<String, String> e : map.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeUTF(e.getValue());
        }
    }

    static Map<String, String> readMap(DataInputStream in) throws IOException {
        int size = in.readInt();
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
            map.put(in.readUTF(), in.readUTF());
        }
        return map;
    }
}
