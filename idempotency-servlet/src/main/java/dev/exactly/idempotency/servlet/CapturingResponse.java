package dev.exactly.idempotency.servlet;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The response the handler writes to on a guarded route. Nothing reaches the real response while the
 * handler runs: status, headers, cookies and body are kept here (as a container would keep an
 * uncommitted response), including what {@code sendError}, {@code sendRedirect} and {@code flushBuffer}
 * do, so that the filter can record the response before answering.
 *
 * <p>A body that outgrows {@code captureLimit} is streamed instead: the status and headers so far are
 * committed through {@link Spill} and the rest of the body goes straight to the client (memory stays
 * bounded; the record then keeps a {@code response-not-stored} problem instead of the body).
 *
 * <p>{@code sendError(status, message)} produces a problem document of type {@code about:blank} (not
 * the container's error page), so that the first response and its replays are the same bytes.
 */
final class CapturingResponse extends HttpServletResponseWrapper {
    /** Commits the captured status and headers to the real response and returns its body stream. */
    @FunctionalInterface
    interface Spill {
        OutputStream commit(CapturedResponse head) throws IOException;
    }

    private final int captureLimit;
    private final Spill spill;
    private final Map<String, CapturedResponse.Header> headers = new LinkedHashMap<>();
    private final List<Cookie> cookies = new ArrayList<>();
    private ByteArrayOutputStream buffer = new ByteArrayOutputStream(256);
    private final Body body = new Body();
    private int status = SC_OK;
    private @Nullable String contentType;
    private @Nullable String charset;
    private @Nullable Locale locale;
    private @Nullable OutputStream streamedTo;
    /** A streamed write or flush failed: the client went away; the rest of the body is counted, not sent. */
    private boolean clientGone;

    private long bodyBytes;
    private boolean committed;
    private boolean closed;
    private boolean usingStream;
    private @Nullable PrintWriter writer;
    private @Nullable EncodingWriter encoder;

    CapturingResponse(HttpServletResponse response, int captureLimit, Spill spill) {
        super(response);
        this.captureLimit = captureLimit;
        this.spill = spill;
    }

    /** Whether the body outgrew the capture and its head was sent. */
    boolean streamed() {
        return streamedTo != null;
    }

    /** Ends capture: writes a held-back character, and returns what was produced. */
    CapturedResponse finish() throws IOException {
        if (encoder != null) {
            encoder.drain();
        }
        flushClient();
        return snapshot(streamedTo == null ? buffer.toByteArray() : null);
    }

    private CapturedResponse snapshot(byte @Nullable [] bytes) {
        List<CapturedResponse.Header> list = new ArrayList<>();
        String type = effectiveContentType();
        if (type != null) {
            list.add(new CapturedResponse.Header("Content-Type", List.of(type)));
        }
        if (locale != null && !headers.containsKey("content-language")) {
            list.add(new CapturedResponse.Header("Content-Language", List.of(locale.toLanguageTag())));
        }
        list.addAll(headers.values());
        return new CapturedResponse(status, List.copyOf(list), List.copyOf(cookies), bytes, bodyBytes);
    }

    // ---- status and redirects ---------------------------------------------------------------------

    @Override
    public void setStatus(int sc) {
        if (!committed) {
            status = sc;
        }
    }

    @Override
    public int getStatus() {
        return status;
    }

    @Override
    public void sendError(int sc) throws IOException {
        sendError(sc, null);
    }

    @Override
    public void sendError(int sc, @Nullable String msg) throws IOException {
        checkNotCommitted();
        clearBody();
        status = sc;
        charset = null;
        contentType = Problem.MEDIA_TYPE;
        byte[] problem = Problems.forStatus(sc, msg).toJson();
        buffer.write(problem);
        bodyBytes = problem.length;
        committed = true;
        closed = true;
    }

    @Override
    public void sendRedirect(String location) throws IOException {
        sendRedirect(location, SC_FOUND, true);
    }

    @Override
    public void sendRedirect(String location, int sc) throws IOException {
        sendRedirect(location, sc, true);
    }

    @Override
    public void sendRedirect(String location, boolean clearBuffer) throws IOException {
        sendRedirect(location, SC_FOUND, clearBuffer);
    }

    @Override
    public void sendRedirect(String location, int sc, boolean clearBuffer) throws IOException {
        checkNotCommitted();
        if (clearBuffer) {
            clearBody();
        }
        status = sc;
        put("Location", location, false);
        committed = true;
        closed = true;
    }

    // ---- headers ----------------------------------------------------------------------------------

    @Override
    public void setHeader(String name, @Nullable String value) {
        put(name, value, false);
    }

    @Override
    public void addHeader(String name, @Nullable String value) {
        put(name, value, true);
    }

    @Override
    public void setIntHeader(String name, int value) {
        put(name, Integer.toString(value), false);
    }

    @Override
    public void addIntHeader(String name, int value) {
        put(name, Integer.toString(value), true);
    }

    @Override
    public void setDateHeader(String name, long date) {
        put(name, HttpDates.format(Instant.ofEpochMilli(date)), false);
    }

    @Override
    public void addDateHeader(String name, long date) {
        put(name, HttpDates.format(Instant.ofEpochMilli(date)), true);
    }

    private void put(String name, @Nullable String value, boolean add) {
        if (committed) {
            return;
        }
        String lower = name.toLowerCase(Locale.ROOT);
        switch (lower) {
            case "content-type" -> setContentType(value);
            case "content-length", "transfer-encoding" -> {
                /* framing is the filter's */
            }
            default -> {
                if (value == null) {
                    if (!add) {
                        headers.remove(lower);
                    }
                    return;
                }
                CapturedResponse.Header existing = headers.get(lower);
                List<String> values = new ArrayList<>();
                if (add && existing != null) {
                    values.addAll(existing.values());
                }
                values.add(value);
                headers.put(lower, new CapturedResponse.Header(existing != null ? existing.name() : name, values));
            }
        }
    }

    @Override
    public boolean containsHeader(String name) {
        return getHeader(name) != null;
    }

    @Override
    public @Nullable String getHeader(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        if (lower.equals("content-type")) {
            return effectiveContentType();
        }
        if (lower.equals("content-language") && locale != null && !headers.containsKey(lower)) {
            return locale.toLanguageTag();
        }
        CapturedResponse.Header header = headers.get(lower);
        return header == null ? null : header.values().getFirst();
    }

    @Override
    public Collection<String> getHeaders(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        CapturedResponse.Header header = headers.get(lower);
        if (header != null) {
            return List.copyOf(header.values());
        }
        String single = getHeader(name);
        return single == null ? List.of() : List.of(single);
    }

    @Override
    public Collection<String> getHeaderNames() {
        List<String> names = new ArrayList<>();
        snapshot(null).headers().forEach(h -> names.add(h.name()));
        return names;
    }

    @Override
    public void addCookie(Cookie cookie) {
        if (!committed) {
            cookies.add(cookie);
        }
    }

    @Override
    public void setTrailerFields(Supplier<Map<String, String>> supplier) {
        // trailers are neither captured nor replayed on guarded routes
    }

    // ---- content type, charset, locale ------------------------------------------------------------

    @Override
    public void setContentType(@Nullable String type) {
        if (committed) {
            return;
        }
        if (type == null) {
            contentType = null;
            return;
        }
        String declared = charsetParameter(type);
        if (declared != null && writer != null) {
            // as in a container: once the writer is obtained its charset is fixed
            contentType = withoutCharset(type);
        } else {
            contentType = type;
            if (declared != null) {
                charset = declared;
            }
        }
    }

    @Override
    public @Nullable String getContentType() {
        return effectiveContentType();
    }

    @Override
    public void setCharacterEncoding(@Nullable String encoding) {
        if (!committed && writer == null) {
            charset = encoding;
            if (contentType != null && charsetParameter(contentType) != null) {
                contentType = withoutCharset(contentType);
            }
        }
    }

    @Override
    public void setCharacterEncoding(@Nullable Charset encoding) {
        setCharacterEncoding(encoding == null ? null : encoding.name());
    }

    @Override
    public String getCharacterEncoding() {
        return charset != null ? charset : StandardCharsets.ISO_8859_1.name();
    }

    @Override
    public void setLocale(@Nullable Locale loc) {
        if (!committed) {
            locale = loc;
        }
    }

    @Override
    public Locale getLocale() {
        return locale != null ? locale : Locale.getDefault();
    }

    private @Nullable String effectiveContentType() {
        if (contentType == null) {
            return null;
        }
        if (charsetParameter(contentType) != null || (charset == null && writer == null)) {
            return contentType;
        }
        return contentType + ";charset=" + getCharacterEncoding();
    }

    /**
     * The {@code charset} parameter of a media type, unquoted, or {@code null}: the first
     * {@code ;}-separated part (whitespace stripped) that starts with {@code charset=}, ignoring case.
     * Scanned in place: every guarded response with a content type comes through here.
     */
    static @Nullable String charsetParameter(String type) {
        int length = type.length();
        int start = 0;
        while (start <= length) {
            int end = type.indexOf(';', start);
            if (end < 0) {
                end = length;
            }
            int from = start;
            while (from < end && Character.isWhitespace(type.charAt(from))) {
                from++;
            }
            if (end - from >= 8 && type.regionMatches(true, from, "charset=", 0, 8)) {
                String value = type.substring(from + 8, end).strip();
                if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                    value = value.substring(1, value.length() - 1);
                }
                return value.isEmpty() ? null : value;
            }
            start = end + 1;
        }
        return null;
    }

    private static String withoutCharset(String type) {
        StringBuilder out = new StringBuilder();
        for (String param : type.split(";", 0)) { // 0: a trailing empty parameter is dropped, not written back
            if (!param.strip().regionMatches(true, 0, "charset=", 0, 8)) {
                out.append(out.isEmpty() ? "" : ";").append(param);
            }
        }
        return out.toString();
    }

    // ---- body -------------------------------------------------------------------------------------

    @Override
    public ServletOutputStream getOutputStream() {
        if (writer != null) {
            throw new IllegalStateException("getWriter() has already been called on this response");
        }
        usingStream = true;
        return body;
    }

    @Override
    public PrintWriter getWriter() {
        if (usingStream) {
            throw new IllegalStateException("getOutputStream() has already been called on this response");
        }
        if (writer == null) {
            Charset cs;
            try {
                cs = Charset.forName(getCharacterEncoding());
            } catch (IllegalCharsetNameException | UnsupportedCharsetException unknown) {
                cs = StandardCharsets.ISO_8859_1;
            }
            charset = cs.name();
            encoder = new EncodingWriter(body, cs);
            writer = new PrintWriter(encoder, false);
        }
        return writer;
    }

    @Override
    public void setContentLength(int len) {
        // the filter frames the body it writes
    }

    @Override
    public void setContentLengthLong(long len) {
        // the filter frames the body it writes
    }

    @Override
    public void setBufferSize(int size) {
        if (committed || bodyBytes > 0) {
            throw new IllegalStateException("setBufferSize after content was written");
        }
    }

    @Override
    public int getBufferSize() {
        return captureLimit;
    }

    @Override
    public void flushBuffer() {
        committed = true;
        flushClient();
    }

    @Override
    public boolean isCommitted() {
        return committed;
    }

    @Override
    public void reset() {
        checkNotCommitted();
        status = SC_OK;
        headers.clear();
        cookies.clear();
        contentType = null;
        locale = null;
        if (writer == null) {
            charset = null;
        }
        clearBody();
    }

    @Override
    public void resetBuffer() {
        checkNotCommitted();
        clearBody();
    }

    private void clearBody() {
        if (streamedTo == null) {
            buffer.reset();
            bodyBytes = 0;
        }
        if (encoder != null) {
            encoder.discardPending();
        }
    }

    private void checkNotCommitted() {
        if (committed) {
            throw new IllegalStateException("the response has already been committed");
        }
    }

    private void append(byte[] bytes, int off, int len) throws IOException {
        if (closed || len == 0) {
            return;
        }
        if (streamedTo == null && buffer.size() + (long) len > captureLimit) {
            committed = true;
            OutputStream out = spill.commit(snapshot(null));
            streamedTo = out;
            byte[] sofar = buffer.toByteArray();
            buffer = new ByteArrayOutputStream(0);
            toClient(sofar, 0, sofar.length);
        }
        if (streamedTo != null) {
            toClient(bytes, off, len);
        } else {
            buffer.write(bytes, off, len);
        }
        bodyBytes += len;
    }

    /**
     * Writes streamed bytes to the client, unless the client has gone: then they are counted and dropped, and
     * the handler is not told. A write that fails (the connection reset, the client closed it) would otherwise
     * fail the handler, which counts as "it threw": its key released and its retry run again, although it ran
     * and is still running to its end. Its outcome is recorded as any streamed one.
     */
    private void toClient(byte[] bytes, int off, int len) {
        OutputStream out = streamedTo;
        if (out == null || clientGone || len == 0) {
            return;
        }
        try {
            out.write(bytes, off, len);
        } catch (IOException gone) {
            clientGone = true;
        }
    }

    private void flushClient() {
        OutputStream out = streamedTo;
        if (out == null || clientGone) {
            return;
        }
        try {
            out.flush();
        } catch (IOException gone) {
            clientGone = true;
        }
    }

    /** The handler's body stream: captures, or streams once past the limit. */
    private final class Body extends ServletOutputStream {
        @Override
        public void write(int b) throws IOException {
            append(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            append(b, off, len);
        }

        @Override
        public void flush() {
            flushClient();
        }

        @Override
        public void close() throws IOException {
            if (encoder != null) {
                encoder.drain();
            }
            closed = true;
            committed = true;
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setWriteListener(WriteListener writeListener) {
            throw new IllegalStateException("idempotent routes require synchronous handlers (no non-blocking IO)");
        }
    }
}
