package dev.exactly.idempotency.servlet;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.charset.Charset;

/**
 * Encodes characters straight through to a byte stream, holding back at most a trailing high surrogate
 * (so a pair split across two writes is encoded as one character). Holding nothing else means that
 * clearing the capture buffer also clears whatever the handler wrote through its writer.
 */
final class EncodingWriter extends Writer {
    private final OutputStream out;
    private final Charset charset;
    private char pendingHigh;
    private boolean hasPending;

    EncodingWriter(OutputStream out, Charset charset) {
        this.out = out;
        this.charset = charset;
    }

    Charset charset() {
        return charset;
    }

    @Override
    public void write(char[] chars, int off, int len) throws IOException {
        encode(new String(chars, off, len));
    }

    @Override
    public void write(String text, int off, int len) throws IOException {
        encode(text.substring(off, off + len));
    }

    private void encode(String text) throws IOException {
        if (text.isEmpty()) {
            return;
        }
        String chunk = hasPending ? pendingHigh + text : text;
        char last = chunk.charAt(chunk.length() - 1);
        hasPending = Character.isHighSurrogate(last);
        if (hasPending) {
            pendingHigh = last;
            chunk = chunk.substring(0, chunk.length() - 1);
        }
        if (!chunk.isEmpty()) {
            out.write(chunk.getBytes(charset));
        }
    }

    /** Forgets a held-back surrogate (the buffer it belonged to was cleared). */
    void discardPending() {
        hasPending = false;
    }

    /** Writes a held-back lone surrogate (as the charset's replacement). */
    void drain() throws IOException {
        if (hasPending) {
            hasPending = false;
            out.write(String.valueOf(pendingHigh).getBytes(charset));
        }
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void close() throws IOException {
        drain();
        out.close();
    }
}
