package dev.exactly.idempotency.redis.internal;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The compact binary form of response headers kept in a record: a version byte ({@code 1}), the number
 * of names, then per name its UTF-8 bytes, its number of values and each value's UTF-8 bytes. Every
 * count and length is a 4-byte big-endian integer. Order is kept.
 */
public final class HeaderCodec {
    private static final byte VERSION = 1;

    private HeaderCodec() {}

    public static byte[] encode(Map<String, List<String>> headers) {
        List<byte[]> parts = new ArrayList<>();
        int size = 1 + 4;
        for (Map.Entry<String, List<String>> header : headers.entrySet()) {
            byte[] name = utf8(header.getKey());
            parts.add(name);
            size += 4 + name.length + 4;
            for (String value : header.getValue()) {
                byte[] bytes = utf8(value);
                parts.add(bytes);
                size += 4 + bytes.length;
            }
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        out.put(VERSION).putInt(headers.size());
        int next = 0;
        for (List<String> values : headers.values()) {
            putBytes(out, parts.get(next++));
            out.putInt(values.size());
            for (int i = 0; i < values.size(); i++) {
                putBytes(out, parts.get(next++));
            }
        }
        return out.array();
    }

    /** The length of {@link #encode}'s result, without building it. */
    public static int encodedLength(Map<String, List<String>> headers) {
        int size = 1 + 4;
        for (Map.Entry<String, List<String>> header : headers.entrySet()) {
            size += 4 + utf8Length(header.getKey()) + 4;
            for (String value : header.getValue()) {
                size += 4 + utf8Length(value);
            }
        }
        return size;
    }

    /**
     * Writes what {@link #encode} returns into {@code out} at {@code at} ({@link #encodedLength} bytes),
     * without intermediate arrays for ASCII text; returns the position after it.
     */
    public static int encodeInto(Map<String, List<String>> headers, byte[] out, int at) {
        out[at++] = VERSION;
        at = putInt(out, at, headers.size());
        for (Map.Entry<String, List<String>> header : headers.entrySet()) {
            at = putText(out, at, header.getKey());
            List<String> values = header.getValue();
            at = putInt(out, at, values.size());
            for (int i = 0; i < values.size(); i++) {
                at = putText(out, at, values.get(i));
            }
        }
        return at;
    }

    /**
     * Reads what {@link #encode} wrote.
     *
     * @throws IllegalArgumentException the bytes are not a header block of this version
     */
    public static Map<String, List<String>> decode(byte[] encoded) {
        return decode(encoded, 0, encoded.length);
    }

    /**
     * Reads what {@link #encode} wrote, found at {@code offset} in {@code bytes} for {@code length} bytes
     * (a record's value: no copy of the block).
     *
     * @throws IllegalArgumentException the bytes are not a header block of this version
     */
    public static Map<String, List<String>> decode(byte[] bytes, int offset, int length) {
        ByteBuffer in = ByteBuffer.wrap(bytes, offset, length);
        try {
            if (in.get() != VERSION) {
                throw new IllegalArgumentException("unknown header encoding version");
            }
            int names = count(in);
            Map<String, List<String>> headers = new LinkedHashMap<>();
            for (int n = 0; n < names; n++) {
                String name = getString(in);
                int valueCount = count(in);
                List<String> values = new ArrayList<>(valueCount);
                for (int v = 0; v < valueCount; v++) {
                    values.add(getString(in));
                }
                headers.put(name, List.copyOf(values));
            }
            if (in.hasRemaining()) {
                throw new IllegalArgumentException("trailing bytes after the header block");
            }
            return headers;
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated header block", e);
        }
    }

    private static void putBytes(ByteBuffer out, byte[] bytes) {
        out.putInt(bytes.length).put(bytes);
    }

    private static int count(ByteBuffer in) {
        int n = in.getInt();
        if (n < 0 || n > in.remaining()) {
            throw new IllegalArgumentException("corrupt header block: count " + n);
        }
        return n;
    }

    private static String getString(ByteBuffer in) {
        int length = count(in);
        ByteBuffer slice = in.slice(in.position(), length);
        in.position(in.position() + length);
        if (slice.hasArray() && ascii(slice)) { // nearly every header: no decoder to build
            return new String(slice.array(), slice.arrayOffset() + slice.position(), length, StandardCharsets.US_ASCII);
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(slice)
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("header text is not UTF-8", e);
        }
    }

    private static boolean ascii(ByteBuffer bytes) {
        for (int i = bytes.position(); i < bytes.limit(); i++) {
            if (bytes.get(i) < 0) {
                return false;
            }
        }
        return true;
    }

    /** UTF-8 bytes of {@code text}: its length for ASCII, else what {@link String#getBytes} makes of it. */
    private static int utf8Length(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) >= 0x80) {
                return utf8(text).length;
            }
        }
        return text.length();
    }

    private static int putText(byte[] out, int at, String text) {
        int length = text.length();
        int start = at + 4;
        for (int i = 0; i < length; i++) {
            char c = text.charAt(i);
            if (c >= 0x80) {
                byte[] bytes = utf8(text);
                int next = putInt(out, at, bytes.length);
                System.arraycopy(bytes, 0, out, next, bytes.length);
                return next + bytes.length;
            }
            out[start + i] = (byte) c;
        }
        putInt(out, at, length);
        return start + length;
    }

    private static int putInt(byte[] out, int at, int value) {
        out[at] = (byte) (value >>> 24);
        out[at + 1] = (byte) (value >>> 16);
        out[at + 2] = (byte) (value >>> 8);
        out[at + 3] = (byte) value;
        return at + 4;
    }

    private static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
