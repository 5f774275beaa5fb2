package dev.exactly.psp.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One request of an {@link Http1Server} connection and its answer: the request's method, target, headers
 * and body, the answer's headers, and {@link #respond} to send it, once.
 */
public final class Exchange {

    private final Http1Server.Connection connection;
    private final Http1Server.Head head;
    private final Http1Server.BodyInput body;
    private final List<String[]> answerHeaders = new ArrayList<>(4);
    private boolean responded;

    Exchange(Http1Server.Connection connection, Http1Server.Head head, Http1Server.BodyInput body) {
        this.connection = connection;
        this.head = head;
        this.body = body;
    }

    public String method() {
        return head.method();
    }

    /** The request target as sent ({@link URI#getPath()} decodes it). */
    public URI uri() {
        return head.uri();
    }

    /** The values of a request header, in order (names compare without case); empty when absent. */
    public List<String> headers(String name) {
        return head.all(name);
    }

    /** The first value of a request header, or null. */
    public @Nullable String header(String name) {
        return head.first(name);
    }

    /** The request body (empty when there is none); reading it sends 100 Continue when the client waits for it. */
    public InputStream body() {
        return body;
    }

    Http1Server.BodyInput bodyInput() {
        return body;
    }

    /** Sets an answer header, replacing any of the same name. */
    public void setHeader(String name, String value) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= ' ' || c >= 0x7f || c == ':') {
                throw new IllegalArgumentException("invalid header name: " + name);
            }
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if ((c < ' ' && c != '\t') || c == 0x7f || c > 0xff) {
                throw new IllegalArgumentException("invalid character in the value of header " + name);
            }
        }
        answerHeaders.removeIf(h -> h[0].equalsIgnoreCase(name));
        answerHeaders.add(new String[] {name, value});
    }

    /** Sends the answer, head and body in one write (a HEAD request gets the head alone). */
    public void respond(int status, byte[] answer) throws IOException {
        if (responded) {
            throw new IllegalStateException("already answered");
        }
        if (status < 200 || status > 599 || status == 204 || status == 304) {
            throw new IllegalArgumentException("status " + status + " is not a final answer with a body");
        }
        responded = true;
        byte[] bytes = head(status, answerHeaders, answer.length, closesConnection());
        connection.write(bytes, method().equals("HEAD") ? null : answer);
    }

    boolean responded() {
        return responded;
    }

    /** Whether the connection closes after this exchange (HTTP/1.0 without keep-alive, or the client asked). */
    boolean closesConnection() {
        return head.http10() ? !head.connectionHas("keep-alive") : head.connectionHas("close");
    }

    /** An answer's head: status line, {@code Date}, the given headers, {@code Content-Length}. */
    static byte[] head(int status, List<String[]> headers, long contentLength, boolean close) {
        StringBuilder s = new StringBuilder(160);
        s.append("HTTP/1.1 ")
                .append(status)
                .append(' ')
                .append(Http1Server.reason(status))
                .append("\r\n");
        s.append("Date: ").append(date()).append("\r\n");
        boolean typed = false;
        for (String[] h : headers) {
            s.append(h[0]).append(": ").append(h[1]).append("\r\n");
            typed |= h[0].equalsIgnoreCase("Content-Type");
        }
        if (!typed) {
            s.append("Content-Type: application/json\r\n");
        }
        s.append("Content-Length: ").append(contentLength).append("\r\n");
        if (close) {
            s.append("Connection: close\r\n");
        }
        s.append("\r\n");
        return s.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private record DateText(long second, String text) {}

    private static volatile @Nullable DateText date;

    /** The {@code Date} header's value, formatted once a second. */
    private static String date() {
        long second = System.currentTimeMillis() / 1000;
        DateText d = date;
        if (d == null || d.second() != second) {
            d = new DateText(
                    second,
                    DateTimeFormatter.RFC_1123_DATE_TIME.format(
                            ZonedDateTime.ofInstant(java.time.Instant.ofEpochSecond(second), ZoneOffset.UTC)));
            date = d;
        }
        return d.text();
    }
}
