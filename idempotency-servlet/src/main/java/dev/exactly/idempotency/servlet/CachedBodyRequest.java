package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.PayloadTooLargeException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.Part;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The request the handler sees on a guarded route: its body was read once (bounded) and fingerprinted,
 * and is replayed from memory by {@link #getInputStream()} and {@link #getReader()}. Form parameters
 * ({@code application/x-www-form-urlencoded}) are parsed from the same bytes, so {@link #getParameter}
 * still works. Multipart bodies and asynchronous processing are not supported on guarded routes.
 *
 * <p>The running lease is this wrapper's attribute {@link IdempotencyFilter#LEASE}: the handler and every
 * filter after the guard see it through this request, and nothing is written into (or removed from) the
 * container's request for it.
 */
final class CachedBodyRequest extends HttpServletRequestWrapper {
    private final byte[] body;
    private @Nullable Object lease;
    private @Nullable Map<String, String[]> parameters;
    private @Nullable ServletInputStream stream;
    private @Nullable BufferedReader reader;

    /**
     * @param upstreamParameters the container's parameters when a filter before the guard parsed the form body
     *                           (so that it was no longer there to read), else {@code null}: the parameters
     *                           are then parsed from {@code body} and the query string
     */
    CachedBodyRequest(
            HttpServletRequest request,
            byte[] body,
            @Nullable Object lease,
            @Nullable Map<String, String[]> upstreamParameters) {
        super(request);
        this.body = body;
        this.lease = lease;
        this.parameters = upstreamParameters;
    }

    /**
     * Whether a form body was parsed into parameters before the guard read it: a filter ahead of it called
     * {@code getParameter} (Spring's {@code FormContentFilter} for PUT, PATCH and DELETE, a CSRF check, a
     * logging filter), and the container delivered fewer bytes than the request declared, or none of a body
     * of unknown length.
     */
    static boolean formReadUpstream(HttpServletRequest request, byte[] read) {
        long declared = request.getContentLengthLong();
        return isForm(request.getContentType()) && (declared > read.length || (declared < 0 && read.length == 0));
    }

    /**
     * The form the container parsed, as canonical form bytes (every parameter, query's and body's, in the
     * container's order, UTF-8 percent-encoded): what is fingerprinted when the body itself was read before.
     */
    static byte[] formBytes(Map<String, String[]> parameters) {
        StringBuilder out = new StringBuilder();
        parameters.forEach((name, values) -> {
            for (String value : values) {
                if (!out.isEmpty()) {
                    out.append('&');
                }
                out.append(java.net.URLEncoder.encode(name, StandardCharsets.UTF_8))
                        .append('=')
                        .append(java.net.URLEncoder.encode(value, StandardCharsets.UTF_8));
            }
        });
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public @Nullable Object getAttribute(String name) {
        return IdempotencyFilter.LEASE.equals(name) ? lease : super.getAttribute(name);
    }

    @Override
    public Enumeration<String> getAttributeNames() {
        Enumeration<String> names = super.getAttributeNames();
        if (lease == null) {
            return names;
        }
        List<String> all = new ArrayList<>();
        all.add(IdempotencyFilter.LEASE);
        while (names.hasMoreElements()) {
            String name = names.nextElement();
            if (!IdempotencyFilter.LEASE.equals(name)) {
                all.add(name);
            }
        }
        return Collections.enumeration(all);
    }

    @Override
    public void setAttribute(String name, @Nullable Object value) {
        if (IdempotencyFilter.LEASE.equals(name)) {
            lease = value;
        } else {
            super.setAttribute(name, value);
        }
    }

    @Override
    public void removeAttribute(String name) {
        if (IdempotencyFilter.LEASE.equals(name)) {
            lease = null;
        } else {
            super.removeAttribute(name);
        }
    }

    /**
     * Reads at most {@code limit} bytes of the body, refusing a declared length over the limit before
     * reading anything, and counting bytes of a body of unknown length (chunked) as they arrive.
     *
     * @throws PayloadTooLargeException when the body is longer than {@code limit}
     */
    static byte[] readBounded(HttpServletRequest request, int limit) throws IOException {
        long declared = request.getContentLengthLong();
        if (declared > limit) {
            throw new PayloadTooLargeException(limit);
        }
        try (InputStream in = request.getInputStream()) {
            if (declared >= 0) {
                return readDeclared(in, (int) declared, limit);
            }
            return readUnknown(in, limit);
        }
    }

    /**
     * A body of declared length: read straight into an array of that size. A container delivers no more
     * than it declared; should one do so anyway, the rest is read too and counts against the limit.
     */
    private static byte[] readDeclared(InputStream in, int declared, int limit) throws IOException {
        byte[] body = new byte[declared];
        int n = in.readNBytes(body, 0, declared);
        if (n < declared) {
            return Arrays.copyOf(body, n); // the client stopped early: what arrived
        }
        int next = in.read();
        if (next == -1) {
            return body;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(declared + 256);
        out.write(body);
        out.write(next);
        return readRest(in, out, limit);
    }

    private static byte[] readUnknown(InputStream in, int limit) throws IOException {
        return readRest(in, new ByteArrayOutputStream(256), limit);
    }

    /** Appends the rest of {@code in} to {@code out}, counting every byte against the limit. */
    private static byte[] readRest(InputStream in, ByteArrayOutputStream out, int limit) throws IOException {
        if (out.size() > limit) {
            throw new PayloadTooLargeException(limit);
        }
        byte[] buffer = new byte[8192];
        long total = out.size();
        int n;
        while ((n = in.read(buffer)) != -1) {
            total += n;
            if (total > limit) {
                throw new PayloadTooLargeException(limit);
            }
            out.write(buffer, 0, n);
        }
        return out.toByteArray();
    }

    @Override
    public ServletInputStream getInputStream() {
        if (stream == null) {
            stream = new CachedInputStream(body);
        }
        return stream;
    }

    @Override
    public BufferedReader getReader() {
        if (reader == null) {
            reader = new BufferedReader(new InputStreamReader(new ByteArrayInputStream(body), charset()));
        }
        return reader;
    }

    @Override
    public int getContentLength() {
        return body.length;
    }

    @Override
    public long getContentLengthLong() {
        return body.length;
    }

    @Override
    public @Nullable String getParameter(String name) {
        String[] values = parameters().get(name);
        return values == null ? null : values[0];
    }

    @Override
    public Map<String, String[]> getParameterMap() {
        return parameters();
    }

    @Override
    public Enumeration<String> getParameterNames() {
        return Collections.enumeration(parameters().keySet());
    }

    @Override
    public String @Nullable [] getParameterValues(String name) {
        String[] values = parameters().get(name);
        return values == null ? null : values.clone();
    }

    @Override
    public Collection<Part> getParts() throws ServletException {
        throw new ServletException("multipart request bodies are not supported on idempotent routes");
    }

    @Override
    public Part getPart(String name) throws ServletException {
        throw new ServletException("multipart request bodies are not supported on idempotent routes");
    }

    @Override
    public boolean isAsyncSupported() {
        return false;
    }

    @Override
    public AsyncContext startAsync() {
        throw asyncUnsupported();
    }

    @Override
    public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
        throw asyncUnsupported();
    }

    private static IllegalStateException asyncUnsupported() {
        return new IllegalStateException(
                "idempotent routes require synchronous handlers: the response is captured when the handler returns");
    }

    private Charset charset() {
        String name = getCharacterEncoding();
        if (name == null) {
            return StandardCharsets.UTF_8;
        }
        try {
            return Charset.forName(name);
        } catch (IllegalCharsetNameException | UnsupportedCharsetException unknown) {
            return StandardCharsets.UTF_8;
        }
    }

    private Map<String, String[]> parameters() {
        Map<String, String[]> params = parameters;
        if (params == null) {
            Map<String, List<String>> collected = new LinkedHashMap<>();
            Charset charset = charset();
            String query = getQueryString();
            if (query != null) {
                parseForm(query, charset, collected);
            }
            if (isForm(getContentType())) {
                parseForm(new String(body, charset), charset, collected);
            }
            Map<String, String[]> result = new LinkedHashMap<>();
            collected.forEach((name, values) -> result.put(name, values.toArray(String[]::new)));
            params = Collections.unmodifiableMap(result);
            parameters = params;
        }
        return params;
    }

    static boolean isForm(@Nullable String contentType) {
        return contentType != null
                && contentType.toLowerCase(Locale.ROOT).strip().startsWith("application/x-www-form-urlencoded");
    }

    /** Parses {@code a=1&b=2}; percent-escapes are decoded as {@code charset}, malformed pairs skipped. */
    private static void parseForm(String encoded, Charset charset, Map<String, List<String>> into) {
        for (String pair : encoded.split("&", -1)) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String rawName = eq < 0 ? pair : pair.substring(0, eq);
            String rawValue = eq < 0 ? "" : pair.substring(eq + 1);
            try {
                String name = URLDecoder.decode(rawName, charset);
                String value = URLDecoder.decode(rawValue, charset);
                into.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
            } catch (IllegalArgumentException malformed) {
                // as containers do: a malformed pair is dropped, the rest is kept
            }
        }
    }

    private static final class CachedInputStream extends ServletInputStream {
        private final ByteArrayInputStream in;

        CachedInputStream(byte[] body) {
            this.in = new ByteArrayInputStream(body);
        }

        @Override
        public int read() {
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return in.read(b, off, len);
        }

        @Override
        public byte[] readAllBytes() {
            return in.readAllBytes();
        }

        @Override
        public byte[] readNBytes(int len) {
            if (len < 0) {
                throw new IllegalArgumentException("len < 0");
            }
            byte[] out = new byte[Math.min(len, in.available())];
            in.readNBytes(out, 0, out.length);
            return out;
        }

        @Override
        public int readNBytes(byte[] b, int off, int len) {
            return in.readNBytes(b, off, len);
        }

        @Override
        public int available() {
            return in.available();
        }

        @Override
        public boolean isFinished() {
            return in.available() == 0;
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setReadListener(ReadListener readListener) {
            throw asyncUnsupported();
        }
    }
}
