package dev.exactly.payments.edge;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket: the request line and headers go out exactly as written (no client
 * library normalises or refuses a path first), and the response is read until the server closes.
 */
final class RawHttp {
    private RawHttp() {}

    /** A response: status, headers (lower-case names, last value wins) and the decoded body. */
    record Response(int status, Map<String, String> headers, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        String header(String name) {
            return headers.getOrDefault(name.toLowerCase(Locale.ROOT), "");
        }

        boolean isProblem() {
            return header("content-type").startsWith("application/problem+json") && text().contains("\"type\"");
        }

        @Override
        public String toString() {
            String t = text();
            return status + " " + header("content-type") + " " + (t.length() > 300 ? t.substring(0, 300) + "..." : t);
        }
    }

    /** Sends {@code head} (request line and headers, CRLF-separated, without the blank line) and a body. */
    static Response send(int port, String head, byte[] body) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            String withLength =
                    head + (body.length > 0 || head.startsWith("POST") ? "\r\nContent-Length: " + body.length : "");
            out.write((withLength + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            try {
                out.write(body);
                out.flush();
            } catch (IOException refusedUnread) {
                // the server answered from the head alone and closed: its answer is still there to read
            }
            return read(socket.getInputStream());
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "raw request failed: " + head.lines().findFirst().orElse(""), e);
        }
    }

    static Response get(int port, String target, String... headers) {
        return send(port, "GET " + target + " HTTP/1.1\r\nHost: localhost" + join(headers), new byte[0]);
    }

    static Response post(int port, String target, String body, String... headers) {
        return send(
                port,
                "POST " + target + " HTTP/1.1\r\nHost: localhost" + join(headers),
                body.getBytes(StandardCharsets.UTF_8));
    }

    private static String join(String... headers) {
        StringBuilder b = new StringBuilder();
        for (String h : headers) {
            b.append("\r\n").append(h);
        }
        return b.toString();
    }

    private static Response read(InputStream in) throws IOException {
        byte[] all = in.readAllBytes();
        int end = indexOf(all, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        if (end < 0) {
            throw new IOException("no complete response head in " + all.length + " bytes");
        }
        String[] lines = new String(all, 0, end, StandardCharsets.ISO_8859_1).split("\r\n", 0);
        int status = Integer.parseInt(lines[0].split(" ", 0)[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.put(
                        lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT),
                        lines[i].substring(colon + 1).strip());
            }
        }
        byte[] raw = java.util.Arrays.copyOfRange(all, end + 4, all.length);
        byte[] body = "chunked".equalsIgnoreCase(headers.get("transfer-encoding")) ? dechunk(raw) : raw;
        return new Response(status, headers, body);
    }

    private static byte[] dechunk(byte[] raw) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int i = 0;
        while (i < raw.length) {
            int lineEnd = indexOf(
                    java.util.Arrays.copyOfRange(raw, i, raw.length), "\r\n".getBytes(StandardCharsets.ISO_8859_1));
            if (lineEnd < 0) {
                break;
            }
            String size = new String(raw, i, lineEnd, StandardCharsets.ISO_8859_1).split(";", 0)[0].strip();
            int n = Integer.parseInt(size, 16);
            i += lineEnd + 2;
            if (n == 0) {
                break;
            }
            out.write(raw, i, Math.min(n, raw.length - i));
            i += n + 2;
        }
        return out.toByteArray();
    }

    private static int indexOf(byte[] data, byte[] pattern) {
        outer:
        for (int i = 0; i + pattern.length <= data.length; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (data[i + j] != pattern[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
