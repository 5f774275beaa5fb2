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

    /**
     * Reads what {@link #encode} wrote.
     *
     * @throws IllegalArgumentException the bytes are not a header block of this version
     */
    public static Map<String, List<String>> decode(byte[] encoded) {
        ByteBuffer in = ByteBuffer.wrap(encoded);
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
            return StandardCharsets.UTF_8.newDecoder()
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

    private static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
