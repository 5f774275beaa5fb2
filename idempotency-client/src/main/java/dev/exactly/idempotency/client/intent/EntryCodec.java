package dev.exactly.idempotency.client.intent;

import dev.exactly.idempotency.client.IdempotentRequest;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * The bytes of one journal entry in a {@link FileKeyJournal} file. Big-endian, every string as a 4-byte
 * length and UTF-8 bytes:
 *
 * <pre>
 *   "EXKJ" version(1 byte = 1)
 *   namespace id key method
 *   targetCount target...
 *   headerCount (name valueCount value...)...
 *   bodyLength body
 *   createdSeconds(8) createdNanos(4)
 *   finished(1 byte: 0 or 1) [finishedSeconds(8) finishedNanos(4) finalStatus(4)]
 *   crc32c(4) of every byte before it
 * </pre>
 *
 * A file whose length, structure or checksum does not match is rejected as a whole: an entry is read
 * complete or not at all.
 */
final class EntryCodec {
    private static final byte[] MAGIC = {'E', 'X', 'K', 'J'};
    private static final byte VERSION = 1;
    private static final int MAX_STRING = 64 * 1024;
    private static final int MAX_COUNT = 1000;
    /** The largest body a file entry holds: 64 MiB. */
    static final int MAX_BODY = 64 * 1024 * 1024;

    private EntryCodec() {}

    static byte[] encode(JournalEntry e) {
        if (e.request().bodyLength() > MAX_BODY) {
            throw new IllegalArgumentException("a journaled request body is at most " + MAX_BODY + " bytes");
        }
        ByteArrayOutputStream bytes =
                new ByteArrayOutputStream(256 + e.request().bodyLength());
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write(MAGIC);
            out.writeByte(VERSION);
            string(out, e.intent().namespace());
            string(out, e.intent().id());
            string(out, e.key());
            string(out, e.request().method());
            List<URI> targets = e.request().targets();
            out.writeInt(targets.size());
            for (URI target : targets) {
                string(out, target.toString());
            }
            Map<String, List<String>> headers = e.request().headers();
            out.writeInt(headers.size());
            for (Map.Entry<String, List<String>> h : headers.entrySet()) {
                string(out, h.getKey());
                out.writeInt(h.getValue().size());
                for (String v : h.getValue()) {
                    string(out, v);
                }
            }
            byte[] body = e.request().body();
            out.writeInt(body.length);
            out.write(body);
            Instant created = e.createdAt();
            out.writeLong(created.getEpochSecond());
            out.writeInt(created.getNano());
            Instant finished = e.finishedAt();
            out.writeByte(finished == null ? 0 : 1);
            if (finished != null) {
                out.writeLong(finished.getEpochSecond());
                out.writeInt(finished.getNano());
                out.writeInt(e.finalStatus());
            }
        } catch (IOException impossible) {
            throw new UncheckedIOException(impossible);
        }
        byte[] content = bytes.toByteArray();
        CRC32C crc = new CRC32C();
        crc.update(content);
        return ByteBuffer.allocate(content.length + 4)
                .put(content)
                .putInt((int) crc.getValue())
                .array();
    }

    /**
     * The entry in {@code data}.
     *
     * @throws IllegalArgumentException if the bytes are not one complete, intact entry
     */
    static JournalEntry decode(byte[] data) {
        if (data.length < MAGIC.length + 1 + 4) {
            throw new IllegalArgumentException("too short (" + data.length + " bytes)");
        }
        CRC32C crc = new CRC32C();
        crc.update(data, 0, data.length - 4);
        ByteBuffer in = ByteBuffer.wrap(data);
        if ((int) crc.getValue() != in.getInt(data.length - 4)) {
            throw new IllegalArgumentException("checksum mismatch (torn or damaged)");
        }
        in.limit(data.length - 4);
        try {
            byte[] magic = new byte[MAGIC.length];
            in.get(magic);
            if (!java.util.Arrays.equals(magic, MAGIC) || in.get() != VERSION) {
                throw new IllegalArgumentException("not a key journal entry of version " + VERSION);
            }
            IntentId intent = new IntentId(string(in), string(in));
            String key = string(in);
            String method = string(in);
            int targetCount = count(in);
            if (targetCount < 1) {
                throw new IllegalArgumentException("no target");
            }
            IdempotentRequest.Builder request = IdempotentRequest.builder(method, uri(string(in)));
            for (int i = 1; i < targetCount; i++) {
                request.alsoTo(uri(string(in)));
            }
            int headerCount = count(in);
            for (int i = 0; i < headerCount; i++) {
                String name = string(in);
                int values = count(in);
                for (int j = 0; j < values; j++) {
                    request.header(name, string(in));
                }
            }
            int bodyLength = in.getInt();
            if (bodyLength < 0 || bodyLength > MAX_BODY || bodyLength > in.remaining()) {
                throw new IllegalArgumentException("bad body length " + bodyLength);
            }
            byte[] body = new byte[bodyLength];
            in.get(body);
            request.body(body);
            Instant created = Instant.ofEpochSecond(in.getLong(), in.getInt());
            byte finished = in.get();
            @Nullable Instant finishedAt = null;
            int status = 0;
            if (finished == 1) {
                finishedAt = Instant.ofEpochSecond(in.getLong(), in.getInt());
                status = in.getInt();
            } else if (finished != 0) {
                throw new IllegalArgumentException("bad finished flag");
            }
            if (in.hasRemaining()) {
                throw new IllegalArgumentException(in.remaining() + " bytes after the entry");
            }
            return new JournalEntry(intent, key, request.build(), created, finishedAt, status);
        } catch (BufferUnderflowException | DateTimeException e) {
            throw new IllegalArgumentException("truncated or malformed: " + e, e);
        }
    }

    private static void string(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_STRING) {
            throw new IllegalArgumentException("a journaled string is at most " + MAX_STRING + " bytes");
        }
        out.writeInt(b.length);
        out.write(b);
    }

    private static String string(ByteBuffer in) {
        int length = in.getInt();
        if (length < 0 || length > MAX_STRING || length > in.remaining()) {
            throw new IllegalArgumentException("bad string length " + length);
        }
        byte[] b = new byte[length];
        in.get(b);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("a string is not UTF-8", e);
        }
    }

    private static int count(ByteBuffer in) {
        int n = in.getInt();
        if (n < 0 || n > MAX_COUNT) {
            throw new IllegalArgumentException("bad count " + n);
        }
        return n;
    }

    private static URI uri(String s) {
        try {
            return new URI(s);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("bad target " + s, e);
        }
    }
}
