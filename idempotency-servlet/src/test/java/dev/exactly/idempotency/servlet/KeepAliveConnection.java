package dev.exactly.idempotency.servlet;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * One HTTP/1.1 connection written and read by hand, so that a test knows which requests share it (the JDK client
 * decides that itself): a request is sent only after the answer to the one before it was read to its end.
 */
public final class KeepAliveConnection implements AutoCloseable {
    /** An answer read off the connection; header names in lower case. */
    public record Answer(int status, Map<String, String> headers, byte[] body) {
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** Whether the server said it closes the connection after this answer. */
        public boolean closes() {
            return Optional.ofNullable(headers.get("connection"))
                    .map(v -> v.equalsIgnoreCase("close"))
                    .orElse(false);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private KeepAliveConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Opens a connection to {@code server}; a read that waits longer than ten seconds fails. */
    public static KeepAliveConnection open(Call.Endpoint server) throws IOException {
        Socket socket =
                new Socket(InetAddress.getLoopbackAddress(), server.uri("/").getPort());
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        return new KeepAliveConnection(socket);
    }

    /** Sends a POST with {@code headers} ("Name: value") and {@code body} (Content-Length), and reads its answer. */
    public Answer post(String path, List<String> headers, byte[] body) throws IOException {
        StringBuilder head = new StringBuilder("POST ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        headers.forEach(header -> head.append(header).append("\r\n"));
        head.append("Content-Length: ").append(body.length).append("\r\n\r\n");
        out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
        out.flush(); // the head in a segment of its own: a server may answer it before the body arrives
        out.write(body);
        out.flush();
        return read();
    }

    /** Whether the server has closed the connection (end of stream before any byte of another answer). */
    public boolean closedByServer() throws IOException {
        return in.read() == -1;
    }

    private Answer read() throws IOException {
        String statusLine = line();
        int status = Integer.parseInt(statusLine.split(" ", 3)[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String line = line(); !line.isEmpty(); line = line()) {
            int colon = line.indexOf(':');
            headers.merge(
                    line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    line.substring(colon + 1).trim(),
                    (a, b) -> a + ", " + b);
        }
        if (headers.containsKey("transfer-encoding")) {
            return new Answer(status, headers, chunked());
        }
        int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
        return new Answer(status, headers, in.readNBytes(length));
    }

    private byte[] chunked() throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (int size = Integer.parseInt(line().split(";", 0)[0].trim(), 16);
                size > 0;
                size = Integer.parseInt(line().split(";", 0)[0].trim(), 16)) {
            body.write(in.readNBytes(size));
            line();
        }
        for (String trailer = line(); !trailer.isEmpty(); trailer = line()) {
            // trailers are not used by the tests
        }
        return body.toByteArray();
    }

    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b == -1) {
                throw new EOFException("the server closed the connection");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
